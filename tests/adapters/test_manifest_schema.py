"""slack_manifest.yaml validates against Slack's own app-manifest JSON schema (slackapi/manifest-schema,
in the samples' schemas/ folder): the top schema and the versions it refers to, resolved locally."""

from __future__ import annotations

import json

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7
from samples import folder
from support import REPO

ROOT = folder()
VERSIONS = "https://raw.githubusercontent.com/slackapi/manifest-schema/v0.5.0/schemas/"


def validator() -> jsonschema.Draft7Validator:
    schemas = ROOT / "schemas"
    top = json.loads((schemas / "manifest.schema.json").read_text())
    registry = Registry().with_resources(
        (VERSIONS + path.name, Resource.from_contents(json.loads(path.read_text()), default_specification=DRAFT7))
        for path in schemas.glob("manifest.schema.*.json"))
    return jsonschema.Draft7Validator(top, registry=registry)


def test_the_slack_manifest_validates_against_slacks_schema() -> None:
    manifest = yaml.safe_load((REPO / "slack_manifest.yaml").read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(manifest)]
    assert errors == []


def test_the_schema_check_can_fail() -> None:
    manifest = yaml.safe_load((REPO / "slack_manifest.yaml").read_text())
    manifest["features"]["slash_commands"][0]["command"] = "quiz"  # a command must start with a slash
    manifest["oauth_config"]["scopes"]["bot"].append(7)
    assert list(validator().iter_errors(manifest))
