"""Independent validators: stepped-beam transfer matrix and exact quadrature, extensible
elastica, closed-form mechanism kinematics, two-body impact through a contact law."""
