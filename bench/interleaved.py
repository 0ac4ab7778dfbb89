"""Two ways of running the same steps, measured against each other in one
process: rounds interleaved, the order flipping every round, so drift and
order hit both alike; the ratio of their medians with a 95% percentile
bootstrap interval (scipy, 2000 resamples, seed 1). The Python overhead
benches share it."""
import statistics

import numpy
import scipy.stats


def interleave(rounds, plain, harness):
    """(plain step times, harness step times) of `rounds` rounds of both."""
    plain_steps, harness_steps = [], []
    for round_index in range(rounds):
        sides = [lambda: plain_steps.extend(plain()), lambda: harness_steps.extend(harness())]
        for side in (sides if round_index % 2 == 0 else sides[::-1]):
            side()
    return plain_steps, harness_steps


def ratio_columns(plain, harness):
    """'plain median, harness median, ratio [low, high]' as the benches print it."""
    interval = scipy.stats.bootstrap(
        (numpy.array(harness), numpy.array(plain)), lambda a, b: numpy.median(a) / numpy.median(b),
        vectorized=False, method="percentile", n_resamples=2000, random_state=1).confidence_interval
    ratio = statistics.median(harness) / statistics.median(plain)
    return (f"{statistics.median(plain) * 1e3:>10.3f} ms {statistics.median(harness) * 1e3:>11.3f} ms "
            f"{ratio:>7.3f}  [{interval.low:.3f}, {interval.high:.3f}]")
