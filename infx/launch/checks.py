"""Content checks on a resolved recipe against its point and the lane's rules.

Each check is a function (plan context -> diagnostics) listed in CHECKS, so the dry run,
the launch and the tests all run the same list. They read data only; nothing here acts.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import shapes
from ..diagnostics import Diagnostic, error
from ..recipes import RecipeError, nested, recipe_node_count
from ..workers import ROLES, is_aggregated

if TYPE_CHECKING:  # annotations only
    from .lane import Lane, ModelEntry


def image_problem(image: Any) -> str | None:
    if not isinstance(image, str) or not image:
        return "the point has no image"
    if shapes.problem("image", image, "image"):  # the shape is infx/shapes.py's
        return f"image {image!r} is not a valid container reference"
    return None


def image_spellings(image: str) -> set[str]:
    """The image and its other registry notation: ``nvcr.io#nvidia/x`` (enroot) names ``nvcr.io/nvidia/x``."""
    cut = min((i for i in (image.find("/"), image.find("#")) if i >= 0), default=-1)
    if cut < 0 or shapes.problem("image", image, "image"):
        return {image}
    registry, rest = image[:cut], image[cut + 1 :]
    # Docker's rule: a first component is a registry only with a '.' or ':' or as localhost ('#' always is one).
    if not (image[cut] == "#" or "." in registry or ":" in registry or registry == "localhost"):
        return {image}
    return {f"{registry}/{rest}", f"{registry}#{rest}"}


# --- the recipe's roles and their parallelism, per engine ----------------------------------


@dataclass(frozen=True)
class RoleShape:
    """What a recipe says about one role; None where the recipe does not say."""

    workers: int | None
    tp: int | None
    ep: int | None
    dp_attn: bool | None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _flag(args: dict, *names: str) -> Any:
    for name in names:
        if name in args:
            return args[name]
    return None


def _sglang(args: dict) -> tuple:
    tp = _int(_flag(args, "tensor-parallel-size", "tp-size", "tp"))
    ep = _int(_flag(args, "expert-parallel-size", "ep-size", "ep"))
    dpa = _flag(args, "enable-dp-attention")
    return tp, (ep if ep is not None else (1 if tp is not None else None)), (bool(dpa) if tp is not None else None)


def _vllm(args: dict) -> tuple:
    tp = _int(_flag(args, "tensor-parallel-size", "tp"))
    if tp is None:
        return None, None, None
    dp = _int(_flag(args, "data-parallel-size", "dp")) or 1
    width = tp * dp
    ep = width if _flag(args, "enable-expert-parallel") else 1
    return width, ep, dp > 1


def _trtllm(args: dict) -> tuple:
    tp = _int(args.get("tensor_parallel_size"))
    if tp is None:
        return None, None, None
    ep = _int(args.get("moe_expert_parallel_size"))
    return tp, ep if ep is not None else 1, bool(args.get("enable_attention_dp", False))


# engine -> (v1 config key under backend, extractor)
ENGINES: dict[str, tuple[str, Callable[[dict], tuple]]] = {
    "sglang": ("sglang_config", _sglang),
    "vllm": ("vllm_config", _vllm),
    "trtllm": ("trtllm_config", _trtllm),
}
# role name in the point -> (v1 resources prefix, v1 engine-config section, schema-2 role)
ROLE_NAMES = {
    "prefill": ("prefill", "prefill", "prefill"),
    "decode": ("decode", "decode", "decode"),
    "agg": ("agg", "aggregated", "agg"),
}


def recipe_engine(recipe: dict) -> str | None:
    engine = recipe.get("engine") if recipe.get("schema") == 2 else nested(recipe, "backend", "type")
    return engine if engine in ENGINES else None


def role_shape(recipe: dict, role: str) -> RoleShape | None:
    v1_prefix, v1_section, v2_role = ROLE_NAMES[role]
    engine = recipe_engine(recipe)
    if recipe.get("schema") == 2:
        spec = nested(recipe, "roles", v2_role)
        if not isinstance(spec, dict):
            return None
        workers, args = _int(spec.get("workers")), spec.get("args") or {}
    else:
        resources = recipe.get("resources") or {}
        if f"{v1_prefix}_workers" not in resources and f"{v1_prefix}_nodes" not in resources:
            return None
        workers = _int(resources.get(f"{v1_prefix}_workers"))
        args = nested(recipe, "backend", ENGINES[engine][0], v1_section) if engine else None
    tp = ep = dpa = None
    if engine and isinstance(args, dict):
        tp, ep, dpa = ENGINES[engine][1](args)
    return RoleShape(workers, tp, ep, dpa)


def point_roles(point: dict) -> dict[str, dict]:
    """The point's worker blocks by recipe role: prefill/decode, or for an aggregated point
    (infx.workers' one form: decode ``num-worker: 0``) its prefill block as the recipe's agg role."""
    if is_aggregated(point):
        return {"agg": point["prefill"]}
    return {role: point[role] for role in ROLES if isinstance(point.get(role), dict)}


def point_role_path(role: str) -> tuple:
    """Where a recipe role's worker block sits in the point."""
    return ("prefill",) if role == "agg" else (role,)


# --- checks -------------------------------------------------------------------------------


@dataclass
class CheckContext:
    """Everything a check reads. ``at_point(path)`` / ``at_recipe(path)`` locate a diagnostic."""

    point: dict
    recipe: dict
    lane: Lane
    model: ModelEntry | None  # the lane's model entry for this point
    power: bool
    recipe_file: str
    recipe_where: Callable[[tuple], tuple[int, int] | None]
    point_file: str
    point_where: Callable[[tuple], tuple[int, int] | None]

    def at_point(self, path: tuple, rule: str, message: str, hint: str = "") -> Diagnostic:
        return error(self.point_file, self.point_where(path), rule, message, hint)

    def at_recipe(self, path: tuple, rule: str, message: str, hint: str = "") -> Diagnostic:
        return error(self.recipe_file, self.recipe_where(path), rule, message, hint)


def check_roles(ctx: CheckContext) -> Iterable[Diagnostic]:
    """The point's roles (aggregated, or prefill + decode) and each role's workers, TP, EP and
    DP-attention are the recipe's (rules point-recipe-topology and point-recipe-mismatch)."""
    labels = {"workers": "num-worker", "tp": "tp", "ep": "ep", "dp_attn": "dp-attn"}
    for role, block in point_roles(ctx.point).items():
        shape = role_shape(ctx.recipe, role)
        if shape is None:
            yield ctx.at_point(
                point_role_path(role),
                "point-recipe-topology",
                f"the point has a {role} role but the recipe has none",
                "Point CONFIG_FILE at a recipe of the same topology (aggregated vs disaggregated).",
            )
            continue
        for attribute, key in labels.items():
            recipe_value = getattr(shape, attribute)
            point_value = block.get(key, False if key == "dp-attn" else 1 if key == "ep" else None)
            if recipe_value is None or point_value is None:
                continue
            if (bool(point_value) if key == "dp-attn" else _int(point_value)) != recipe_value:
                yield ctx.at_point(
                    point_role_path(role) + (key,),
                    "point-recipe-mismatch",
                    f"{role} {key} is {point_value!r} in the point but {recipe_value!r} in the recipe",
                    "The recipe decides what runs; make the master config's metadata agree with it.",
                )


def check_node_count(ctx: CheckContext) -> Iterable[Diagnostic]:
    try:
        nodes = recipe_node_count(ctx.recipe)
    except RecipeError as exc:
        yield ctx.at_recipe(("resources",), "recipe-nodes", str(exc), exc.hint)
        return
    wanted = ctx.point.get("node-count")
    if wanted is not None and _int(wanted) != nodes:
        yield ctx.at_point(
            ("node-count",),
            "point-recipe-nodes",
            f"the point asks for {wanted} node(s) but the recipe allocates {nodes} (dedicated infra node included)",
            "Regenerate the matrix row from the current recipe.",
        )


def check_model_alias(ctx: CheckContext) -> Iterable[Diagnostic]:
    alias = nested(ctx.recipe, "model", "path")
    if ctx.model is None or alias is None:
        return
    if alias != ctx.model.alias:
        yield ctx.at_recipe(
            ("model", "path"),
            "recipe-model-alias",
            f"model.path is {alias!r}, but this lane maps {ctx.point.get('model-prefix')}/{ctx.point.get('precision')}"
            f"/{ctx.point.get('framework')} to the alias {ctx.model.alias!r}",
            f"Set model.path: {ctx.model.alias} (the only alias written to srtslurm.yaml).",
        )


def check_image(ctx: CheckContext) -> Iterable[Diagnostic]:
    container = nested(ctx.recipe, "model", "container")
    image = ctx.point.get("image")
    if (
        container is None
        or container in ctx.lane.container_aliases
        or (isinstance(image, str) and container in image_spellings(image))
    ):
        return
    yield ctx.at_recipe(
        ("model", "container"),
        "recipe-image",
        f"model.container is {container!r}, which is neither the point's image {image!r} nor a container alias of the "
        "lane",
        f"Use the image under test or one of: {', '.join(ctx.lane.container_aliases)}.",
    )


def _pinned_dynamo(recipe: dict) -> tuple[tuple, str] | None:
    dynamo = recipe.get("dynamo")
    for path in (("wheel",), ("version",), ("source", "pypi"), ("source", "wheel"), ("hash",), ("source", "rev")):
        value = nested(dynamo, *path)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return ("dynamo",) + path, str(value)
    return None


def check_dynamo_version(ctx: CheckContext) -> Iterable[Diagnostic]:
    pinned = _pinned_dynamo(ctx.recipe)
    router = ctx.point.get("router")
    if pinned is None or not isinstance(router, dict) or not str(router.get("name", "")).startswith("dynamo"):
        return
    wanted = str(router.get("version", "")).removeprefix("v")
    if wanted and pinned[1].removeprefix("v") != wanted:
        yield ctx.at_recipe(
            pinned[0],
            "recipe-dynamo-version",
            f"the recipe pins dynamo {pinned[1]!r} but the point's router says {router.get('version')!r}",
            "Make the master config's router version and the recipe's dynamo pin the same.",
        )


def _services(recipe: dict) -> list[tuple[int, dict]]:
    services = recipe.get("services")
    return [(i, s) for i, s in enumerate(services) if isinstance(s, dict)] if isinstance(services, list) else []


def check_store_client_env(ctx: CheckContext) -> Iterable[Diagnostic]:
    rule = ctx.lane.rules.store_client_env
    services = _services(ctx.recipe)
    if not rule or not any(s.get("type") == rule.when_service_type for _, s in services):
        return
    for var in rule.env:
        for role in rule.roles:
            if role in (ctx.recipe.get("roles") or {}) and not nested(ctx.recipe, "roles", role, "env", var):
                yield ctx.at_recipe(
                    ("roles", role, "env"),
                    "lane-store-client-env",
                    f"role {role!r} runs a {rule.when_service_type} client but does not set {var}",
                    f"Set roles.{role}.env.{var} (e.g. mlx5_0,mlx5_1,mlx5_2,mlx5_3); without it the client "
                    "falls back to NVLink for same-domain peers and aborts at warm-up.",
                )
        for index, service in services:
            if service.get("type") in rule.service_types and not nested(service, "env", var):
                yield ctx.at_recipe(
                    ("services", index, "env"),
                    "lane-store-client-env",
                    f"service {service.get('name', index)!r} ({service.get('type')}) does not set {var}",
                    f"Set services[{index}].env.{var}, as on every store client of this lane.",
                )


def service_port(service: dict) -> int | None:
    port = nested(service, "readiness", "port")
    if _int(port) is not None:
        return _int(port)
    argv: list = []
    for key in ("command", "args"):
        value = service.get(key)
        argv += (
            shlex.split(value) if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list) else []
        )
    for i, item in enumerate(argv):
        if item == "--port" and i + 1 < len(argv):
            return _int(argv[i + 1])
        if item.startswith("--port="):
            return _int(item.partition("=")[2])
    return None


def check_service_ports(ctx: CheckContext) -> Iterable[Diagnostic]:
    rule = ctx.lane.rules.distinct_service_ports
    if not rule:
        return
    placed: list[tuple[int, dict, str, int]] = []
    for index, service in _services(ctx.recipe):
        if service.get("type") not in rule.service_types or service.get("enabled") is False:
            continue
        node, port = nested(service, "placement", "node") or "head", service_port(service)
        if port is None:
            continue
        for other_index, other, other_node, other_port in placed:
            if other_port == port and (other_node == node or "all" in (node, other_node)):
                yield ctx.at_recipe(
                    ("services", index),
                    "lane-service-port",
                    f"services {other.get('name', other_index)!r} and {service.get('name', index)!r} both listen on "
                    f"port {port} on the {node} node(s)",
                    "Give each store on a node its own port (e.g. 8800, 8801, 8802, 8803) and readiness port.",
                )
                break
        placed.append((index, service, node, port))


def check_power(ctx: CheckContext) -> Iterable[Diagnostic]:
    allowed = ctx.lane.rules.power_frameworks
    if ctx.power and allowed is not None and ctx.point.get("framework") not in allowed:
        yield ctx.at_recipe(
            ("telemetry",),
            "lane-power-framework",
            f"the recipe enables dcgm-power telemetry, which this lane has validated only for "
            f"{', '.join(allowed)}; the point's framework is {ctx.point.get('framework')!r}",
            "Disable telemetry in this recipe, or validate the power lane for this framework first.",
        )


CHECKS: tuple[Callable[[CheckContext], Iterable[Diagnostic]], ...] = (
    check_roles,
    check_node_count,
    check_model_alias,
    check_image,
    check_dynamo_version,
    check_store_client_env,
    check_service_ports,
    check_power,
)


def run_checks(ctx: CheckContext) -> list[Diagnostic]:
    return [d for check in CHECKS for d in check(ctx)]


def recipe_uses_power(recipe: dict) -> bool:
    """dcgm-power telemetry enabled in the top-level telemetry block (nowhere else counts)."""
    telemetry = recipe.get("telemetry")
    return (
        isinstance(telemetry, dict) and telemetry.get("provider") == "dcgm-power" and telemetry.get("enabled") is True
    )
