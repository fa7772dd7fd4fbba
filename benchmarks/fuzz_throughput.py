"""Fuzzer throughput: program x transform pairs checked per second.

    python benchmarks/fuzz_throughput.py [--n 4] [--seed bench] [--transforms eager,jit,...]
                                         [--eager-oracle]

Generates and checks `n` programs (fuzz.py) with the battery (all transforms by
default), without shrinking, and prints the time spent generating, checking, and
the pairs per second; then the same per transform, so the slow rows are visible.
Every pair compiles fresh XLA programs on both sides, so the rate is dominated by
compilation: expect around one pair per second per core.
"""
import argparse
import os
import time
from collections import defaultdict

os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--transforms", default=None)
    parser.add_argument("--eager-oracle", action="store_true",
                        help="run JAX's side eagerly in every row (the old harness)")
    args = parser.parse_args()
    from minijax.ir.checks import enable_checks
    from minijax.testing import fuzz
    from minijax.testing.fuzz_invariants import INVARIANT_CHECKS
    enable_checks(True)
    transforms = args.transforms.split(",") if args.transforms else fuzz.all_transforms()
    per_transform = defaultdict(float)
    generating = checking = 0.0
    pairs = 0
    for i in range(args.n):
        start = time.perf_counter()
        case = fuzz.generate(f"{args.seed}:{i}")
        generating += time.perf_counter() - start
        recipes = fuzz.recipes_for(case, transforms)
        sides = fuzz.ProgramSides(case.program, case.leaves,
                                  compile_oracle=not args.eager_oracle)
        for name in transforms:
            start = time.perf_counter()
            if name in INVARIANT_CHECKS:
                INVARIANT_CHECKS[name](case)
            else:
                fuzz.compare_row(name, case.program, case.leaves, recipes[name], sides=sides)
            spent = time.perf_counter() - start
            per_transform[name] += spent
            checking += spent
            pairs += 1
    print(f"{args.n} programs, {pairs} pairs: generating {generating:.2f} s, checking "
          f"{checking:.1f} s, {pairs / (generating + checking):.2f} pairs/s")
    for name, spent in sorted(per_transform.items(), key=lambda kv: -kv[1]):
        print(f"  {name:48s} {spent / args.n:7.3f} s per program")


if __name__ == "__main__":
    main()
