"""pyeclib and liberasurecode on whichever libisal.so.2 the library path gives.

    python3 engine.py run OUTDIR       encode, decode and reconstruct; record every outcome
    python3 engine.py decode INDIR OUTDIR
                                       decode and reconstruct the fragments another run made

Both modes first prove which libisal.so.2 is mapped (after making one ISA-L driver, which
is when liberasurecode opens it): the one EXPECT_LIB names, and no
other. Outcomes go to OUTDIR/results.json and fragments to OUTDIR/fragments/, so two runs
on two libraries can be compared byte for byte.
"""

import json
import os
import random
import sys

from pyeclib.ec_iface import ECDriver

TYPES = ["isa_l_rs_vand", "isa_l_rs_cauchy"]
SHAPES = [(4, 2), (6, 3), (8, 4), (10, 4)]
SIZES = [1, 1000, 65536 + 17, 1 << 20]


def check_library():
    mapped = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libisal" in line})
    expect = os.path.realpath(os.environ["EXPECT_LIB"])
    if mapped != [expect]:
        sys.exit(f"libisal mapped: {mapped}; expected only {expect}")


def data_for(ec_type, k, m, size):
    return random.Random(f"{ec_type}/{k}/{m}/{size}").randbytes(size)


def patterns(ec_type, k, m):
    """Missing-fragment patterns (a Cauchy code recovers every one): every single loss, then random losses of 2 to m."""
    rng = random.Random(f"{ec_type}/{k}/{m}")
    out = [[i] for i in range(k + m)]
    for lost in range(2, m + 1):
        out += [sorted(rng.sample(range(k + m), lost)) for _ in range(4)]
    return out


def outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # the error class is part of the recorded behaviour
        return (type(e).__name__, None)


def exercise(ec_type, k, m, size, frags, results):
    driver = ECDriver(k=k, m=m, ec_type=ec_type)
    data = data_for(ec_type, k, m, size)
    for missing in patterns(ec_type, k, m):
        have = [f for i, f in enumerate(frags) if i not in missing]
        status, got = outcome(lambda: driver.decode(have))
        if status == "ok" and got != data:
            sys.exit(f"{ec_type} {k}+{m} size {size} missing {missing}: decode gave wrong data")
        rstatus, rebuilt = outcome(lambda: driver.reconstruct(have, missing))
        if rstatus == "ok":
            for i, f in zip(missing, rebuilt):
                if f != frags[i]:
                    sys.exit(f"{ec_type} {k}+{m} size {size}: reconstructed fragment {i} differs")
        if ec_type == "isa_l_rs_cauchy" and (status, rstatus) != ("ok", "ok"):
            sys.exit(f"{ec_type} {k}+{m} size {size} missing {missing}: {status}, {rstatus}")
        results.append([ec_type, k, m, size, missing, status, rstatus])


def frag_path(root, ec_type, k, m, size, i):
    return os.path.join(root, "fragments", f"{ec_type}-{k}-{m}-{size}-{i}")


def main():
    # liberasurecode opens libisal.so.2 when the first ISA-L backend is made.
    ECDriver(k=4, m=2, ec_type=TYPES[0])
    check_library()
    mode = sys.argv[1]
    out = sys.argv[-1]
    os.makedirs(os.path.join(out, "fragments"), exist_ok=True)
    results = []
    for ec_type in TYPES:
        for k, m in SHAPES:
            driver = ECDriver(k=k, m=m, ec_type=ec_type)
            for size in SIZES:
                if mode == "run":
                    frags = driver.encode(data_for(ec_type, k, m, size))
                    for i, f in enumerate(frags):
                        with open(frag_path(out, ec_type, k, m, size, i), "wb") as fh:
                            fh.write(f)
                else:
                    frags = []
                    for i in range(k + m):
                        with open(frag_path(sys.argv[2], ec_type, k, m, size, i), "rb") as fh:
                            frags.append(fh.read())
                exercise(ec_type, k, m, size, frags, results)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump(results, fh)
    ok = sum(1 for r in results if r[5] == "ok")
    print(f"{mode}: {len(results)} decodes, {ok} recovered the data")


main()
