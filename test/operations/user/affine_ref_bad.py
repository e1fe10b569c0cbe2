"""Broken references for affine.json's variants (bad_defs.py run): each run must fail, naming why."""


def wrong_shape(inputs, scalars):
    return {"y": inputs["w"] * 2}


def no_y(inputs, scalars):
    return {"out": inputs["x"] * inputs["w"] + inputs["b"]}
