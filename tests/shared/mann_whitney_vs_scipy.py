#!/usr/bin/env python3
"""torchsweep's Mann-Whitney U test against scipy.stats.mannwhitneyu (its
default method="auto": exact for small samples without ties, the normal
approximation with tie and continuity corrections otherwise), on seeded
random samples: small and large, with and without ties."""
import argparse
import json
import random
import subprocess
import sys

from scipy.stats import mannwhitneyu


def cases(seed):
    rng = random.Random(seed)
    out = []
    for _ in range(600):
        n1, n2 = rng.randint(1, 12), rng.randint(1, 12)
        if rng.random() < 0.2:
            n2 = rng.randint(20, 60)  # one side large: exact still applies when the other is small
        shift = rng.choice([0.0, 0.5, 2.0])
        if rng.random() < 0.4:  # ties: values on a coarse grid
            x = [float(rng.randint(0, 6)) for _ in range(n1)]
            y = [float(rng.randint(0, 6)) + round(shift) for _ in range(n2)]
        else:
            x = [rng.gauss(0, 1) for _ in range(n1)]
            y = [rng.gauss(shift, 1) for _ in range(n2)]
        out.append([x, y])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--probe", required=True)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    samples = cases(args.seed)
    ours = json.loads(subprocess.run([args.probe], input=json.dumps(samples), capture_output=True, text=True,
                                     check=True).stdout)
    failures, exact = 0, 0
    for (x, y), mine in zip(samples, ours):
        theirs = mannwhitneyu(x, y, alternative="two-sided", method="auto")
        exact += mine["exact"]
        if abs(mine["u"] - theirs.statistic) > 1e-9 or abs(mine["p"] - theirs.pvalue) > 1e-9 * max(1.0, theirs.pvalue):
            failures += 1
            if failures <= 10:
                print(f"x={x} y={y}: torchsweep U={mine['u']} p={mine['p']} (exact={mine['exact']}), "
                      f"scipy U={theirs.statistic} p={theirs.pvalue}", file=sys.stderr)
    print(f"{len(samples) - failures} passed, {failures} failed ({exact} by the exact distribution)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
