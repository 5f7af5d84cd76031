#!/usr/bin/env python3
"""Make the TPC-H reference answers tierbench embeds (internal/tpch/answers).

    scripts/tpch-answers.py SF...        # e.g. 0.01 0.1 1

For each scale factor: tierbench writes the tables (byte for byte dbgen's),
DuckDB (from PyPI: pip install --target DIR duckdb; PYTHONPATH=DIR) loads
them and runs the 22 queries with the specification's validation
parameters, as `tierbench tpch queries --validate` prints them, and the
answers go to internal/tpch/answers/sfSF.txt.gz: for each query a line
"Qn" and then its rows, fields joined by '|', numbers as DuckDB prints
them. DuckDB is an engine of its own, neither of the two tierbench drives;
its answers at SF 1 were checked against TPC's own (dbgen's answers/q*.out)
with tierbench's checker when these files were made.
"""
import gzip, json, os, subprocess, sys, tempfile, decimal, datetime

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB = os.path.join(ROOT, "bin", "tierbench")
COLUMNS = {
    "region": "r_regionkey INTEGER, r_name VARCHAR, r_comment VARCHAR",
    "nation": "n_nationkey INTEGER, n_name VARCHAR, n_regionkey INTEGER, n_comment VARCHAR",
    "part": "p_partkey INTEGER, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, p_size INTEGER, "
            "p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR",
    "supplier": "s_suppkey INTEGER, s_name VARCHAR, s_address VARCHAR, s_nationkey INTEGER, s_phone VARCHAR, "
                "s_acctbal DECIMAL(15,2), s_comment VARCHAR",
    "partsupp": "ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER, ps_supplycost DECIMAL(15,2), ps_comment VARCHAR",
    "customer": "c_custkey INTEGER, c_name VARCHAR, c_address VARCHAR, c_nationkey INTEGER, c_phone VARCHAR, "
                "c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR",
    "orders": "o_orderkey BIGINT, o_custkey INTEGER, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), o_orderdate DATE, "
              "o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INTEGER, o_comment VARCHAR",
    "lineitem": "l_orderkey BIGINT, l_partkey INTEGER, l_suppkey INTEGER, l_linenumber INTEGER, l_quantity DECIMAL(15,2), "
                "l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), l_tax DECIMAL(15,2), l_returnflag VARCHAR, "
                "l_linestatus VARCHAR, l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, "
                "l_shipmode VARCHAR, l_comment VARCHAR",
}


def text(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def answers(sf):
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        subprocess.run([TB, "tpch", "generate", "--scale", sf, "--out", d], check=True, stdout=subprocess.DEVNULL)
        con = duckdb.connect()
        for t, cols in COLUMNS.items():
            con.execute(f"CREATE TABLE {t} ({cols}, _end VARCHAR)")
            con.execute(f"COPY {t} FROM '{d}/{t}.tbl' (DELIMITER '|', HEADER false)")
        queries = json.loads(subprocess.run([TB, "tpch", "queries", "--validate", "--scale", sf, "--json"],
                                            check=True, capture_output=True).stdout)
        out = []
        for q in sorted(queries, key=lambda q: q["query"]):
            rows = None
            for stmt in q["sql"]:
                r = con.execute(stmt)
                if stmt.lstrip().lower().startswith("select"):
                    rows = r.fetchall()
            out.append("Q%d" % q["query"])
            out.extend("|".join(text(v) for v in row) for row in rows)
        return "\n".join(out) + "\n"


def main():
    for sf in sys.argv[1:]:
        path = os.path.join(ROOT, "internal", "tpch", "answers", f"sf{sf}.txt.gz")
        data = answers(sf).encode()
        with open(path, "wb") as f:
            f.write(gzip.compress(data, mtime=0))
        print(path, len(data), 'bytes', data.count(b'\n'), 'lines')


if __name__ == "__main__":
    main()
