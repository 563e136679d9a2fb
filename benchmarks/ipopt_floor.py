"""The fixed cost of one IPOPT call on this machine, whatever the step program.

Times a trivial QP (18 variables, 17 equality rows, as small as the slider-crank step) solved
by IPOPT in one iteration, with the step program's options, for each linear solver the
casadi wheel offers, and how long the same call takes through the Python interface alone.

    python benchmarks/ipopt_floor.py
"""
import time

import casadi as ca
import numpy as np


def main(repeats=300):
    x, p = ca.SX.sym("x", 18), ca.SX.sym("p", 18)
    A = np.random.default_rng(0).normal(size=(17, 18))
    nlp = {"x": x, "p": p, "f": 0.5 * ca.sumsqr(x - p), "g": ca.DM(A) @ x}
    args = dict(x0=np.zeros(18), p=np.arange(18.0), lbg=0, ubg=0)
    print(f"{'linear solver':<14} {'ms per call':>11} {'iterations':>10}  status")
    for linear_solver in ("mumps", "spral", "ma27"):
        opts = {"print_time": False, "error_on_fail": False,
                "ipopt": {"print_level": 0, "sb": "yes", "tol": 1e-8, "mu_init": 1e-9,
                          "warm_start_init_point": "yes", "nlp_scaling_method": "none",
                          "hessian_constant": "yes", "jac_c_constant": "yes",
                          "jac_d_constant": "yes", "linear_solver": linear_solver}}
        if linear_solver == "mumps":
            opts["ipopt"].update(mumps_pivot_order=0, mumps_pivtol=1e-3)
        solver = ca.nlpsol("floor", "ipopt", nlp, opts)
        solver(**args)
        tic = time.perf_counter()
        for _ in range(repeats):
            solver(**args)
        per_call = (time.perf_counter() - tic) / repeats * 1e3
        stats = solver.stats()
        print(f"{linear_solver:<14} {per_call:11.3f} {stats['iter_count']:10d}  "
              f"{stats['return_status']}")


if __name__ == "__main__":
    main()
