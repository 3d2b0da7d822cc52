/* The SCF mini-app's entry point (apps/scf/scf.c), for programs that run it as a function (the GA
 * benchmark links scf.c built with -DSCF_NO_MAIN). */
#ifndef SCF_H
#define SCF_H

#define SCF_MAX_ITERS 64

typedef struct scf_params {
    int n;         /* basis functions: the matrices are n x n doubles */
    int b;         /* task block side (the last block of a row or column may be shorter) */
    int iters;     /* SCF iterations, 1 .. SCF_MAX_ITERS */
    int check;     /* compare F, D and the energies with the serial reference on rank 0 */
    double lambda; /* density damping: D <- (1 - lambda) D + lambda n / |F|^2 F F^T */
} scf_params_t;

typedef struct scf_result {
    double energy[SCF_MAX_ITERS];  /* GA_Ddot(D, F) after each Fock build */
    double seconds[SCF_MAX_ITERS]; /* wall time of each iteration (rank 0, between GA_Syncs) */
    long tasks;                 /* (I, J) tasks this rank took from the counter, all iterations */
    double err_f, err_d, err_e; /* --check: largest relative errors against the reference */
    int failed;                 /* --check: 1 when a comparison failed (same on every rank) */
} scf_result_t;

/* Runs the SCF iterations (collective over GA's world group; GA and MA initialized). Creates and
 * destroys its arrays. Returns r->failed. */
int scf_run(const scf_params_t *p, scf_result_t *r);

#endif
