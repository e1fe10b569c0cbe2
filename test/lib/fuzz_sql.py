#!/usr/bin/env python3
"""fuzz_sql.py: the calls of the SQL function fuzzer (test/suites/fuzz_sql.sh).

Reads the extension's functions and procedures on stdin, one a line, as the
suite lists them from pg_proc through pg_depend (tab-separated: oid, kind
f/p/a/w, the qualified name, its signature, variadic t/f, then the argument
types of the call, each as "type:mode"), and writes into DIR one file of
calls per function, DIR/<oid>.sql, a short set of them DIR/<oid>.short.sql,
and DIR/index.tsv (oid, signature, number of calls, number in the short
set).  Each call is one line: "\\warn CALL n" then the statement, so that
the last marker psql printed (on stderr, in order with the errors) names the
call that crashed the server.

The calls are fixed by count and by a seed (deterministic, whatever the
machine): all arguments NULL; every argument at a plausible base value; each
argument in turn through every value of its type's pool (the others at their
base value, then the others NULL); then RANDOM_CALLS tuples drawn from the
pools by a random.Random seeded with the seed and the function's signature.
The short set: all NULL, the base call, each argument NULL alone and each
alone (the others NULL), and four of the random calls.

    fuzz_sql.py DIR [SEED] < functions.tsv
"""
import os
import random
import sys
import zlib

RANDOM_CALLS = int(os.environ.get("FUZZ_SQL_RANDOM", "12"))

MB = "repeat('x', 1048576)"
DEEP_TEXT = "(repeat('[', 200000) || repeat(']', 200000))"
DEEP_OBJ_TEXT = "(repeat('{\"a\":', 100000) || '1' || repeat('}', 100000))"
DEEP = "(repeat('[', 2000) || repeat(']', 2000))"
A_DIGEST = "(SELECT min(digest) FROM {s}.kbench_runs)"
A_WORKLOAD = "(SELECT min(digest) FROM {s}.kbench_workloads)"
AN_OPERATION = "(SELECT min(name) FROM {s}.kbench_operations)"

# Each pool: SQL expressions of the type (the cast is added when the call is
# written).  The first is the base value.
TEXT = ["'x'", "NULL", "''", MB, DEEP_TEXT, DEEP_OBJ_TEXT, "'layer_norm'", "'forward'", "'cpu'", "'cuda:0'",
        "'sha256:' || repeat('0', 64)", "'sha256:'", A_DIGEST, A_WORKLOAD, AN_OPERATION, "'%'", "E'\\\\'",
        "E'\\x01\\t\\n'", "''';SELECT 1;--'", "repeat('é', 400000)", "'{}'", "'[]'", "'null'", "'1e400'", "'-1'",
        "'NaN'", "'python:/nonexistent/x.py:f'", "'c:/nonexistent/lib.so:f'", "'kbench_admin'"]
JSON = ["'{}'", "NULL", "'[]'", "'\"x\"'", "'1'", "'null'", "'true'", DEEP, DEEP_OBJ_TEXT.replace("100000", "1000"),
        "'{\"rows\": 8, \"hidden\": 8}'", "'{\"rows\": 2147483648, \"hidden\": -1, \"dtype\": \"fp32\"}'",
        "'{\"rows\": 9223372036854775808, \"hidden\": 1e308}'", "'{\"rows\": \"NaN\", \"hidden\": []}'",
        "'{\"rows\": 1e-400, \"hidden\": -0}'", "'{\"kind\": \"BenchmarkRun\"}'", "'{\"kind\": \"OperationSpec\", \"spec\": null}'",
        "'{\"run\": {}, \"protocol\": [], \"environment\": 1}'", "'{\"composite\": {}, \"rawSamplesNs\": [-1, 1e300]}'",
        "json_build_object('x', " + MB + ")", "'{\"a\": 1, \"a\": 2}'", "'[1, 2, 3]'", "'{\"\": \"\"}'"]
INT = ["1", "NULL", "0", "-1", "2147483647", "-2147483648", "100000000"]
BIGINT = ["1", "NULL", "0", "-1", "2147483648", "9223372036854775807", "-9223372036854775808"]
FLOAT = ["1", "NULL", "0", "-1", "'NaN'", "'Infinity'", "'-Infinity'", "1e308", "-1e308", "5e-324", "2147483648",
         "9.3e18", "-0.0"]
NUMERIC = ["1", "NULL", "0", "-1", "'NaN'", "'Infinity'", "'-Infinity'", "1e1000", "-1e-1000"]
BOOL = ["false", "NULL", "true"]
INTERVAL = ["'1 second'", "NULL", "'0'", "'-1 second'", "'1 microsecond'", "'178000000 years'", "'-178000000 years'",
            "'2147483647 days'", "'-2147483648 days'", "'1 month -30 days'", "'2147483647 hours'"]
TIMESTAMPTZ = ["'2026-01-01 00:00:00+00'", "NULL", "'infinity'", "'-infinity'", "'epoch'", "'4713-01-01 00:00:00+00 BC'",
               "'294276-12-31 23:59:59+00'", "'2000-02-29 12:00:00+14'"]
TEXT_ARRAY = ["ARRAY['x']", "NULL", "'{}'", "'{NULL}'", "ARRAY['layer_norm', 'forward', 'cpu']", "'{{a,b},{c,d}}'",
              "'[0:1]={a,b}'", "ARRAY[" + MB + "]", "array_fill('x'::text, ARRAY[100000])", "ARRAY['', NULL, '']"]
FLOAT_ARRAY = ["'{1,2,3,4,5,6,7,8,9,10}'", "NULL", "'{}'", "'{NULL}'", "'{1,NULL,3}'", "'{NaN,Infinity,-Infinity}'",
               "'{{1,2},{3,4}}'", "'[0:2]={1,2,3}'", "'[-2147483648:-2147483647]={1,2}'", "array_fill(1.0::float8, ARRAY[3000])",
               "ARRAY(SELECT (g % 7)::float8 FROM generate_series(1, 3000) g)", "'{1e308,-1e308,5e-324}'", "'{0}'"]
BIGINT_ARRAY = ["'{1,2,3}'", "NULL", "'{}'", "'{NULL}'", "'{-1,0}'", "'{9223372036854775807,-9223372036854775808}'",
                "'{{1,2},{3,4}}'", "'[0:2]={1,2,3}'", "array_fill(1::int8, ARRAY[100000])"]
JSONB_ARRAY = ["ARRAY['{}'::jsonb]", "NULL", "'{}'", "ARRAY[NULL::jsonb]", "ARRAY['[]', '\"x\"', '1', 'null']::jsonb[]",
               "ARRAY['{\"rows\": 8, \"hidden\": 8}']::jsonb[]", "ARRAY[" + DEEP + "::jsonb]"]
BOOL_ARRAY = ["'{t}'", "NULL", "'{}'", "'{NULL}'", "'{{t,f},{f,t}}'"]
REAL = ["1", "NULL", "0", "'NaN'", "'Infinity'", "3.4e38", "-1"]

POOLS = {
    "text": TEXT, "name": TEXT, "json": JSON, "jsonb": JSON, "integer": INT, "smallint": ["1", "NULL", "0", "-1", "32767"],
    "bigint": BIGINT, "double precision": FLOAT, "real": REAL, "numeric": NUMERIC, "boolean": BOOL,
    "interval": INTERVAL, "timestamp with time zone": TIMESTAMPTZ, "timestamp without time zone": TIMESTAMPTZ,
    "text[]": TEXT_ARRAY, "double precision[]": FLOAT_ARRAY, "bigint[]": BIGINT_ARRAY, "integer[]": BIGINT_ARRAY[:5],
    "jsonb[]": JSONB_ARRAY, "boolean[]": BOOL_ARRAY,
}


def pool(typ, schema):
    if typ in POOLS:
        vals = POOLS[typ]
    elif typ.endswith("[]"):
        vals = ["'{}'", "NULL", "'{NULL}'"]
    else:
        # a row type of the extension (kbench_runs, ...): a real row, NULL
        table = typ.split(".")[-1]
        vals = ["(SELECT t FROM %s.%s t ORDER BY 1 LIMIT 1)" % (schema, table), "NULL"]
    return [v.replace("{s}", schema) for v in vals]


def arg(v, typ):
    return "NULL::%s" % typ if v == "NULL" else "(%s)::%s" % (v, typ)


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    index = []
    for line in sys.stdin:
        f = line.rstrip("\n").split("\t")
        if len(f) < 5:
            continue
        oid, kind, qname, sig, variadic = f[:5]
        args = [a.rsplit(":", 1) for a in f[5:] if a]
        schema = qname.split(".")[0]
        types = [a[0] for a in args]
        pools = [pool(t, schema) for t in types]
        tuples = []
        tuples.append(["NULL"] * len(types))
        base = [p[0] for p in pools]
        tuples.append(base)
        for i, p in enumerate(pools):
            for v in p[1:]:
                t = list(base)
                t[i] = v
                tuples.append(t)
            if len(types) > 1:
                t = ["NULL"] * len(types)
                t[i] = p[0]
                tuples.append(t)
        rnd = random.Random(seed * 1000003 + zlib.crc32(sig.encode()))
        for _ in range(RANDOM_CALLS if types else 0):
            tuples.append([rnd.choice(p) for p in pools])
        # the short set (for the roles whose calls mostly stop at a permission check):
        # all NULL, the base call, each argument NULL alone and each alone, a few random calls
        short = {tuple(tuples[0]), tuple(base)}
        for i in range(len(types)):
            t = list(base)
            t[i] = "NULL"
            short.add(tuple(t))
            t = ["NULL"] * len(types)
            t[i] = base[i]
            short.add(tuple(t))
        nrandom = RANDOM_CALLS if types else 0
        for t in tuples[len(tuples) - nrandom:][:4]:
            short.add(tuple(t))
        write(out, oid, kind, qname, types, variadic, tuples, "")
        write(out, oid, kind, qname, types, variadic, [t for t in tuples if tuple(t) in short], ".short")
        nfull = len(set(tuple(t) for t in tuples))
        nshort = len(short)
        index.append("%s\t%s\t%d\t%d" % (oid, sig, nfull, nshort))
    with open(os.path.join(out, "index.tsv"), "w") as fh:
        fh.write("\n".join(index) + "\n")


def write(out, oid, kind, qname, types, variadic, tuples, suffix):
        seen = set()
        calls = []
        for t in tuples:
            key = tuple(t)
            if key in seen:
                continue
            seen.add(key)
            parts = [arg(v, types[i]) for i, v in enumerate(t)]
            if variadic == "t" and parts:
                parts[-1] = "VARIADIC " + parts[-1]
            a = ", ".join(parts)
            if kind == "p":
                calls.append("CALL %s(%s);" % (qname, a))
            else:
                calls.append("SELECT count(*) FROM (SELECT %s(%s)) fuzz;" % (qname, a))
        with open(os.path.join(out, oid + suffix + ".sql"), "w") as fh:
            for n, c in enumerate(calls, 1):
                fh.write("\\warn CALL %d\n%s\n" % (n, c))


if __name__ == "__main__":
    main()
