"""Independent validators: stepped-beam transfer matrix and exact quadrature, extensible
elastica."""
