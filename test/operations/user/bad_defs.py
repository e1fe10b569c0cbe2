"""Writes broken variants of affine.json into DIR (argv[1]) and prints one line per variant:
file|what the refusal must say (test/suites/operations.sh; issue 26 item 4).  Without argv[2]: each
must be refused when it is loaded, naming the field.  With argv[2] = run: definitions that load but
whose reference is broken; a run of each must fail, saying why."""
import copy
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
good = json.load(open(os.path.join(here, "affine.json")))
out = sys.argv[1]
run = sys.argv[2:] == ["run"]


def variant(name, edit, expect, raw=None):
    d = copy.deepcopy(good)
    if edit:
        edit(d)
    path = os.path.join(out, name + ".json")
    with open(path, "w") as f:
        f.write(raw if raw is not None else json.dumps(d))
    print("%s|%s" % (path, expect))


def shape(i, s):
    return lambda d: d["tensors"][i].__setitem__("shape", s)


if run:
    def ref(fn, file):
        return lambda d: d.__setitem__("reference", {"python": fn, "file": os.path.join(here, file)})
    variant("ref_wrong_shape", ref("wrong_shape", "affine_ref_bad.py"),
            "the reference wrong_shape returned y of shape [32], 32 values; the definition's shape is [64, 32]")
    variant("ref_no_output", ref("no_y", "affine_ref_bad.py"), "the reference no_y returned no y (it returned out)")
    sys.exit(0)
variant("unknown_axis", shape(0, ["rows", "colz"]), "tensors[0].shape[1] names the unknown axis 'colz'")
variant("fractional_dim", shape(1, [2.5]), "tensors[1].shape[0] is 2.5, not a positive integer")
variant("zero_dim", shape(1, [0]), "tensors[1].shape[0] is 0, not a positive integer")
variant("bool_dim", shape(1, [True]), "tensors[1].shape[0] is neither an axis name nor an integer")
variant("derived_cycle", lambda d: d["axes"].extend([{"name": "a", "derived": "b + 1"}, {"name": "b", "derived": "a + 1"}]),
        "axes 'a'.derived:")
variant("derived_self", lambda d: d["axes"].append({"name": "c", "derived": "c * 2"}), "axes 'c'.derived:")
variant("no_reference", lambda d: d.pop("reference"), "reference.python must name the float64 reference")
variant("reference_file_missing", lambda d: d["reference"].__setitem__("file", "no_such_ref.py"),
        "reference.file '%s/no_such_ref.py' cannot be read" % out)
variant("reference_function_missing",
        lambda d: d.__setitem__("reference", {"python": "affinez", "file": os.path.join(here, "affine_ref.py")}),
        "reference.python: %s/affine_ref.py defines no 'affinez' at its top level" % here)
variant("fp16", lambda d: d.__setitem__("dtypes", ["fp32", "fp16"]), "dtypes[1] is not fp32 or bf16")
variant("int64_dtype", lambda d: d.__setitem__("dtypes", ["int64"]), "dtypes[0] is not fp32 or bf16")
variant("builtin_name", lambda d: d.__setitem__("name", "rms_norm"), "name 'rms_norm' is already an operation of kbench")
variant("bad_name", lambda d: d.__setitem__("name", "Affine-1"), "name 'Affine-1' must be 1 to 63 of a-z, 0-9 and _")
variant("not_json", None, "is not JSON: ", raw='{"name": "affine",')
variant("duplicate_key", None, "is not JSON: duplicate member name \"name\"", raw='{"name": "affine", "name": "affine2"}')
variant("not_object", None, "is not a JSON object", raw='["affine"]')
variant("gradient_of_output", lambda d: d["tensors"][5].__setitem__("of", "y"), "tensors 'dx'.of must name an input tensor")
variant("returns_unknown", lambda d: d["modes"]["forward"].__setitem__("returns", ["z"]),
        "modes.forward.returns[0] 'z' is not an output, saved or gradient tensor")
variant("returns_input", lambda d: d["modes"]["forward"].__setitem__("returns", ["x"]),
        "modes.forward.returns[0] 'x' is not an output, saved or gradient tensor")
variant("cost_unknown_axis", lambda d: d["cost"]["forward"].__setitem__("flops", "2 * rows * colz"), "cost.forward:")
variant("cost_missing_mode", lambda d: d["cost"].pop("full"), "cost.full needs bytes and flops texts")
variant("fill_unknown", lambda d: d["tensors"][0].__setitem__("fill", {"dist": "normal"}),
        "tensors[0].fill.dist 'normal' is not one of")
variant("role_unknown", lambda d: d["tensors"][3].__setitem__("role", "result"), "tensors[3].role 'result' is not one of")
variant("negative_tolerance", lambda d: d["tolerance"]["fp32"].__setitem__("rtol", -1),
        "tolerance.fp32 needs non-negative rtol and atol")
variant("no_axes", lambda d: d.__setitem__("axes", []), "axes must be an array of 1 to")
