"""The catalog's references between entries and files: what a record's type cannot say.

The records (`spark_dsl/catalog/__init__.py`) give each field's shape; a name that refers to
another entry (a vendor, a checkpoint, an attention backend, a KV cache dtype, an accelerator) is
only a string there, and these checks find it in the entry it names. Each problem reads
`FILE: FIELD: VALUE ...`. They run on the merged data after every file has decoded.
"""

from __future__ import annotations

from typing import Any


def problems(data: dict[str, Any]) -> list[str]:
    """Every dangling reference, duplicate and written key field; vendors first, as the other
    checks look entries up by vendor."""
    found = _vendors(data)
    if found:
        return found
    return [
        *_recipe_model(data),
        *_checkpoints(data),
        *_names(data),
        *_alternatives(data),
        *_hosts(data),
        *_duplicates(data),
        *_keys_written(data),
    ]


def _vendors(data: dict[str, Any]) -> list[str]:
    """Every vendor named is an entry of `vendors`, which has an image each; the recipe's paths
    and validated checkpoints are given for the same vendors."""
    vendors = data["vendors"]
    named = [(f"accelerators.yaml: accelerators.{k}.vendor", a["vendor"]) for k, a in data["accelerators"].items()]
    named += [
        (f"recipe.yaml: required_settings.{i}.vendor", r["vendor"]) for i, r in enumerate(data["required_settings"])
    ]
    named += [
        (f"recipe.yaml: attention_backends.{i}.vendors", v)
        for i, b in enumerate(data["attention_backends"])
        for v in b["vendors"]
    ]
    named += [
        (f"recipe.yaml: {table}.{v}", v) for table in ("images", "paths", "validated_checkpoints") for v in data[table]
    ]
    found = [f"{where}: {v!r} is not one of vendors ({', '.join(vendors)})" for where, v in named if v not in vendors]
    found += [f"recipe.yaml: images: no image for the vendor {v!r}" for v in vendors if v not in data["images"]]
    if set(data["paths"]) != set(data["validated_checkpoints"]):
        found.append(
            f"recipe.yaml: paths: the vendors {sorted(data['paths'])} are not validated_checkpoints' "
            f"{sorted(data['validated_checkpoints'])}"
        )
    return found


def _recipe_model(data: dict[str, Any]) -> list[str]:
    """The recipe's checkpoint facts are its model's; other models carry their own checkpoints."""
    model_id = data["model"]
    recipe_model = data["models"].get(model_id)
    if recipe_model is None:
        return [f"recipe.yaml: model: {model_id!r} is not in models.yaml"]
    found = [
        f"recipe.yaml: workload_policy.{ckpt}: no such checkpoint in models.{model_id}"
        for ckpt in data["workload_policy"]
        if ckpt not in recipe_model["checkpoints"]
    ]
    model_checkpoints = set(recipe_model["checkpoints"])
    if set(data["checkpoints"]) != model_checkpoints:
        found.append(f"recipe.yaml: checkpoints: {data['checkpoints']} are not the models' {sorted(model_checkpoints)}")
    return found


def _checkpoints(data: dict[str, Any]) -> list[str]:
    """A checkpoint named by the recipe is one of its `checkpoints`; a path's default is one of its
    vendor's validated ones; a load-time conversion converts one of its own model's."""
    spellings = data["checkpoints"]
    named = [(f"validated_checkpoints.{v}", c) for v, listed in data["validated_checkpoints"].items() for c in listed]
    named += [("thresholds.long_context_checkpoints", c) for c in data["thresholds"]["long_context_checkpoints"]]
    found = [
        f"recipe.yaml: {where}: {c!r} is not one of checkpoints {spellings}" for where, c in named if c not in spellings
    ]
    found += [
        f"recipe.yaml: paths.{vendor}.checkpoint: {path['checkpoint']!r} is not in validated_checkpoints.{vendor}"
        for vendor, path in data["paths"].items()
        if path["checkpoint"] not in data["validated_checkpoints"][vendor]
    ]
    found += [
        f"models.yaml: models.{m}.checkpoints.{c}.converts_from: {ckpt['converts_from']!r} is not a checkpoint of "
        f"models.{m} ({', '.join(model['checkpoints'])})"
        for m, model in data["models"].items()
        for c, ckpt in model["checkpoints"].items()
        if ckpt.get("converts_from", c) not in model["checkpoints"]
    ]
    return found


def _names(data: dict[str, Any]) -> list[str]:
    """An attention backend or KV cache dtype named by the recipe is one of its entries."""
    backends = [b["name"] for b in data["attention_backends"]]
    named = [
        (f"paths.{vendor}.{key}", path.get(key))
        for vendor, path in data["paths"].items()
        for key in ("attention", "attention_with_adaptive_dspark")
    ]
    found = [
        f"recipe.yaml: {where}: {name!r} is not one of attention_backends ({', '.join(backends)})"
        for where, name in named
        if name is not None and name not in backends
    ]
    dtypes = [d["name"] for d in data["kv_cache_dtypes"]]
    found += [
        f"recipe.yaml: thresholds.long_context_kv_dtypes: {name!r} is not one of kv_cache_dtypes ({', '.join(dtypes)})"
        for name in data["thresholds"]["long_context_kv_dtypes"]
        if name not in dtypes
    ]
    return found


def _alternatives(data: dict[str, Any]) -> list[str]:
    """What a vendor suggests instead: a validated accelerator (of its own vendor where it has
    one; the CPU, which has none, suggests another's), and an attention backend it runs."""
    found = []
    backends = {b["name"]: b["vendors"] for b in data["attention_backends"]}
    for vendor, facts in data["vendors"].items():
        alt = data["accelerators"].get(facts["validated_alternative"])
        own = any(a["vendor"] == vendor and a["validated"] for a in data["accelerators"].values())
        if alt is None or (own and alt["vendor"] != vendor) or not alt["validated"]:
            found.append(
                f"recipe.yaml: vendors.{vendor}.validated_alternative: {facts['validated_alternative']!r} "
                f"is not a validated {vendor + ' ' if own else ''}accelerator"
            )
        instead = facts["attention_instead"]
        if instead != "auto" and vendor not in backends.get(instead, ()):
            found.append(f"recipe.yaml: vendors.{vendor}.attention_instead: {instead!r} is not a {vendor} backend")
    return found


def _hosts(data: dict[str, Any]) -> list[str]:
    """An accelerator whose memory is the host's (`memory_gb: null`) has no GPU for a runtime to
    reach: its vendor names no Kubernetes GPU resource, Apptainer flag or Compose device."""
    found = []
    for acc_id, acc in data["accelerators"].items():
        runtime = data["vendors"][acc["vendor"]]["runtime"]
        gpu = any(runtime[k] is not None for k in runtime)
        if (acc["memory_gb"] is None) == gpu:
            found.append(
                f"accelerators.yaml: accelerators.{acc_id}.memory_gb: "
                + ("null, but vendors." if gpu else "set, but vendors.")
                + f"{acc['vendor']}.runtime {'reaches' if gpu else 'names no'} GPUs"
            )
    return found


def _duplicates(data: dict[str, Any]) -> list[str]:
    """Lists whose entries are a set, kept as lists for their order (shown to users): each entry
    once. The recipe's named lists are read as mappings by name, where a second entry would hide."""
    lists = [(f"models.yaml: models.{k}.modalities", m["modalities"]) for k, m in data["models"].items()]
    lists += [(f"recipe.yaml: paths.{k}.modalities", p["modalities"]) for k, p in data["paths"].items()]
    lists += [
        (f"accelerators.yaml: accelerators.{k}.weight_formats", a["weight_formats"])
        for k, a in data["accelerators"].items()
        if a.get("weight_formats") is not None
    ]
    lists += [
        (f"recipe.yaml: attention_backends.{i}.vendors", b["vendors"]) for i, b in enumerate(data["attention_backends"])
    ]
    lists += [("recipe.yaml: checkpoints", data["checkpoints"])]
    lists += [(f"recipe.yaml: {k}", [e["name"] for e in data[k]]) for k in ("attention_backends", "kv_cache_dtypes")]
    return [
        f"{where}: {name!r} is listed twice"
        for where, listed in lists
        for name in sorted(set(listed))
        if listed.count(name) > 1
    ]


def _keys_written(data: dict[str, Any]) -> list[str]:
    """An entry's id is its key (`catalog.KEYED`); a file that writes it as a field as well is wrong
    in one of the two places."""
    entries = [(f"accelerators.yaml: accelerators.{k}", e, "id") for k, e in data["accelerators"].items()]
    entries += [(f"models.yaml: models.{k}", e, "id") for k, e in data["models"].items()]
    entries += [
        (f"models.yaml: models.{k}.checkpoints.{c}", e, "id")
        for k, m in data["models"].items()
        for c, e in m["checkpoints"].items()
    ]
    entries += [(f"recipe.yaml: vendors.{k}", e, "name") for k, e in data["vendors"].items()]
    return [
        f"{where}.{field}: {entry[field]!r}: the entry's key is its {field}; remove the field"
        for where, entry, field in entries
        if field in entry
    ]
