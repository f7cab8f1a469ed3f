# Compile once: every numba kernel the pipeline uses is compiled (or loaded from the cache)
# by this one job before the others start, so no two jobs compile the same kernels at once.
# The record is keyed by the kernel cache's source digest (ancf_beam.kernel_cache): an edit of
# the library compiles anew. Every rule that runs kernels takes it as input (KERNELS).
# Under a cluster executor the job runs on a compute node: the kernels are compiled for that
# node's processor (docs/pipeline.md, "Compiled kernels").


rule compile_kernels:
    output:
        KERNELS,
    log:
        f"{RES}/logs/compile_kernels/{KERNEL_DIGEST}.log",
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
