# Compile once: every numba kernel the pipeline uses is compiled (or loaded from the cache)
# by these jobs before the others start, so no two jobs compile the same kernels at once.
# One job per group of kernels (ancf_beam.warmup.GROUPS): beam_static first (the others call
# its kernels), then beam_dynamics and mbs side by side (distinct kernels). Each record is
# keyed by the kernel cache's source digest (ancf_beam.kernel_cache): an edit of the library
# compiles anew. Every rule that runs kernels takes the records of the groups it uses
# (KERNELS_BEAM, KERNELS_MBS, or all: KERNELS).
# Under a cluster executor the jobs run on a compute node: the kernels are compiled for that
# node's processor (docs/pipeline.md, "Compiled kernels").


rule compile_kernels:
    input:
        kernel_group_inputs,
    output:
        KERNEL_RECORD,
    log:
        f"{RES}/logs/compile_kernels/{KERNEL_DIGEST}/{{group}}.log",
    wildcard_constraints:
        group="beam_static|beam_dynamics|mbs",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=30,
    params:
        package=PACKAGE,
    script:
        "../scripts/compile_kernels.py"
