"""Independent validators: stepped-beam transfer matrix and exact quadrature, extensible
elastica, closed-form mechanism kinematics, two-body impact through a contact law, and
minimal-coordinate slider-cranks with clearances (two revolute clearance joints; a slider
with clearance in its guide)."""
