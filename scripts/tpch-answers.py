#!/usr/bin/env python3
"""Make the TPC-H reference answers tierbench embeds (internal/tpch/answers).

    PYTHONPATH=DIR scripts/tpch-answers.py --dbgen DBGEN [--sf 0.01 0.1 1]

DBGEN is a built TPC-H dbgen 2.14.0 (TPC's own kit: dbgen, qgen, queries/,
dists.dss, answers/); DIR holds DuckDB and its tpch extension from PyPI:

    pip install --target DIR duckdb==1.5.5 duckdb-extension-tpch==1.5.5

Where the answers come from. For each scale factor, TPC's dbgen writes the
tables; DuckDB (an engine of its own, neither of the two tierbench drives)
loads them and runs the 22 queries exactly as TPC's qgen prints them with
the validation parameters (qgen -d -s SF: the specification's defaults,
with Q11's fraction 0.0001/SF), its Oracle dialect's two idioms rewritten
for DuckDB (`where rownum <= N` to `limit N`; `interval '90' day (3)` to
`interval '90' day`). Each answer is written in tierbench's own format (see
internal/tpch/answers.go): one gzip'd file per scale factor, sfSF.txt.gz;
for each query a line "Qn rows", the column names joined by '|', then the
rows, values joined by '|': numbers as DuckDB holds them (decimals with
their scale, doubles to full precision), dates as YYYY-MM-DD.

How they are checked, with tierbench's own checker (TestAnswerFiles in
internal/tpch/answers_test.go, which compares answer files in the layout of
TPC's check_answers -- a header line, then rows joined by '|' -- with the
embedded answers, within the specification's tolerances):
  * at SF 1 against TPC's answers (DBGEN/answers/q*.out);
  * at every scale factor against DuckDB's own tpch extension's answers
    (tpch_answers(): DuckDB's port of dbgen and its own query texts), but
    for Q11 at SF other than 1, where that extension keeps the fraction
    at 0.0001 instead of the specification's 0.0001/SF;
  * for the queries with LIMIT, that the row after the last is not tied
    with it on the ORDER BY columns, so which rows make the answer is not
    left to the engine.
The script stops with an error if any of these fails.
"""
import argparse
import datetime
import decimal
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "tpch", "answers")

TABLES = {
    "region": "r_regionkey INTEGER, r_name VARCHAR, r_comment VARCHAR",
    "nation": "n_nationkey INTEGER, n_name VARCHAR, n_regionkey INTEGER, n_comment VARCHAR",
    "part": "p_partkey INTEGER, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, p_size INTEGER, "
            "p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR",
    "supplier": "s_suppkey INTEGER, s_name VARCHAR, s_address VARCHAR, s_nationkey INTEGER, s_phone VARCHAR, "
                "s_acctbal DECIMAL(15,2), s_comment VARCHAR",
    "partsupp": "ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER, ps_supplycost DECIMAL(15,2), "
                "ps_comment VARCHAR",
    "customer": "c_custkey INTEGER, c_name VARCHAR, c_address VARCHAR, c_nationkey INTEGER, c_phone VARCHAR, "
                "c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR",
    "orders": "o_orderkey BIGINT, o_custkey INTEGER, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), "
              "o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INTEGER, o_comment VARCHAR",
    "lineitem": "l_orderkey BIGINT, l_partkey INTEGER, l_suppkey INTEGER, l_linenumber INTEGER, "
                "l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), "
                "l_tax DECIMAL(15,2), l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, "
                "l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, l_shipmode VARCHAR, "
                "l_comment VARCHAR",
}

# The ORDER BY columns (0-based, in the select list) of the queries with
# LIMIT, for the check that no tie straddles the limit.
LIMIT_KEYS = {2: [0, 2, 1, 3], 3: [1, 2], 10: [2], 18: [4, 3], 21: [1, 0]}


def text(v):
    """A value as tierbench stores it."""
    if v is None:
        raise ValueError("a NULL in an answer")
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    return str(v)


def qgen(dbgen, sf, n):
    """Query n as qgen prints it with the validation parameters, for DuckDB."""
    env = dict(os.environ, DSS_QUERY=os.path.join(dbgen, "queries"), DSS_CONFIG=dbgen)
    sql = subprocess.run([os.path.join(dbgen, "qgen"), "-d", "-s", sf, str(n)], cwd=dbgen, env=env,
                         check=True, capture_output=True, text=True).stdout
    limit = None

    def rownum(m):
        nonlocal limit
        if int(m.group(1)) > 0:
            limit = int(m.group(1))
            return "\nlimit %d;" % limit
        return ";"

    sql, k = re.subn(r";\s*\nwhere rownum <= (-?\d+);", rownum, sql)
    if k != 1:
        raise ValueError("Q%d: no rownum line in qgen's output" % n)
    sql = re.sub(r"(interval '\d+' day) \(\d+\)", r"\1", sql)
    stmts = [s for s in (re.sub(r"--[^\n]*", "", s).strip() for s in sql.split(";")) if s]
    return stmts, limit


def run(con, stmts):
    """The rows and column names of the statements' one select."""
    out = None
    for s in stmts:
        cur = con.execute(s)
        if s.lower().startswith("select"):
            if out is not None:
                raise ValueError("two selects")
            out = ([d[0] for d in cur.description], cur.fetchall())
    return out


def answers(dbgen, sf, work):
    """The 22 answers at sf: [(columns, rows)], rows as lists of text."""
    data = os.path.join(work, "tbl-" + sf)
    os.makedirs(data)
    env = dict(os.environ, DSS_PATH=data, DSS_CONFIG=dbgen)
    subprocess.run([os.path.join(dbgen, "dbgen"), "-f", "-q", "-s", sf], cwd=dbgen, env=env, check=True)
    con = duckdb.connect()
    for t, cols in TABLES.items():
        con.execute(f"CREATE TABLE {t} ({cols}, _end VARCHAR)")
        con.execute(f"COPY {t} FROM '{data}/{t}.tbl' (DELIMITER '|', HEADER false)")
    shutil.rmtree(data)
    out = []
    for n in range(1, 23):
        stmts, limit = qgen(dbgen, sf, n)
        cols, rows = run(con, stmts)
        if limit is not None and len(rows) == limit:
            unlimited = [re.sub(r"\nlimit \d+$", "", s) for s in stmts]
            _, more = run(con, unlimited)
            keys = LIMIT_KEYS[n]
            if len(more) > limit and [more[limit][k] for k in keys] == [rows[-1][k] for k in keys]:
                raise ValueError(f"Q{n} at SF {sf}: the row after the limit is tied with the last: {more[limit]}")
        out.append((cols, [[text(v) for v in r] for r in rows]))
    return out


def write(path, answers):
    lines = []
    for n, (cols, rows) in enumerate(answers, 1):
        lines.append("Q%d %d" % (n, len(rows)))
        lines.append("|".join(cols))
        for r in rows:
            if any("|" in v or "\n" in v for v in r):
                raise ValueError(f"Q{n}: a value with '|' or a newline: {r}")
            lines.append("|".join(r))
    with open(path, "wb") as f:
        f.write(gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0))


def duckdb_tpch_answers():
    """DuckDB's tpch extension's answers: {sf: {n: text}}, or None without it."""
    con = duckdb.connect()
    try:
        import duckdb_extension_tpch  # the PyPI package duckdb-extension-tpch
        d = os.path.dirname(duckdb_extension_tpch.__file__)
        con.execute("LOAD '%s'" % os.path.join(d, "extensions", "v" + duckdb.__version__, "tpch.duckdb_extension"))
    except Exception as e:  # noqa: BLE001 -- any failure only skips this check
        print("no DuckDB tpch extension (%s): not compared with tpch_answers()" % e, file=sys.stderr)
        return None
    out = {}
    for n, sf, a in con.execute("SELECT query_nr, scale_factor, answer FROM tpch_answers()").fetchall():
        out.setdefault("%g" % sf, {})[n] = a
    return out


def go_check(specs, run_pattern="TestAnswerFiles"):
    """TestAnswerFiles on each SF=DIR[:skip] (skip: queries to leave out)."""
    env = dict(os.environ, TIERBENCH_TPCH_ANSWER_FILES=";".join(specs))
    r = subprocess.run(["go", "test", "./internal/tpch/", "-count=1", "-v", "-run", run_pattern], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    print(r.stdout[-6000:], r.stderr[-2000:], sep="")
    if r.returncode != 0:
        sys.exit("the answers do not agree; see above")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dbgen", required=True, help="a built TPC-H dbgen 2.14.0 directory")
    ap.add_argument("--sf", nargs="+", default=["0.01", "0.1", "1"])
    ap.add_argument("--out", default=OUT, help="where the answer files go (default: %(default)s)")
    ap.add_argument("--no-check", action="store_true", help="only write the answer files")
    a = ap.parse_args()
    dbgen = os.path.abspath(a.dbgen)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work:
        for sf in a.sf:
            ans = answers(dbgen, sf, work)
            path = os.path.join(a.out, f"sf{sf}.txt.gz")
            write(path, ans)
            print(path, os.path.getsize(path), "bytes,", sum(len(r) for _, r in ans), "rows")
        if a.no_check:
            return
        # The checks read the files just written, as the package embeds them.
        if os.path.realpath(a.out) != os.path.realpath(OUT):
            sys.exit("the checks need the answers in " + OUT)
        specs = []
        tpc = os.path.join(dbgen, "answers")
        if "1" in a.sf and os.path.isdir(tpc):
            specs.append("1=" + tpc)
        ext = duckdb_tpch_answers()
        for sf in a.sf:
            if ext is None or sf not in ext:
                continue
            d = os.path.join(work, "duckdb-tpch-" + sf)
            os.makedirs(d)
            for n, text_ in ext[sf].items():
                with open(os.path.join(d, f"q{n}.out"), "w") as f:
                    f.write(text_ if text_.endswith("\n") else text_ + "\n")
            specs.append(f"{sf}={d}" + ("" if sf == "1" else ":11"))
        if specs:
            go_check(specs)


if __name__ == "__main__":
    main()
