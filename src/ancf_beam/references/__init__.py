"""Independent validators: stepped-beam transfer matrix and exact quadrature, extensible
elastica, closed-form mechanism kinematics (slider-crank, four-bar) and inverse dynamics,
two-body impact through a contact law, the spin-up beam's assumed-modes models, and
minimal-coordinate slider-cranks with clearances (two revolute clearance joints; a slider
with clearance in its guide)."""
