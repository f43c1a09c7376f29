"""OpenAPI 3.1 document built from the Endpoint specs (the same Params the views parse with),
served at /openapi.json and rendered as a plain page at /docs (no CDN-hosted Swagger UI)."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from .. import __version__
from .common import Endpoint, json_response, render, web

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {"type": "string", "description": "what went wrong"},
        "fix": {"type": "string", "description": "how to fix it"},
        "status": {"type": "integer"},
    },
    "required": ["error", "status"],
}


def _oa_path(path: str) -> str:
    return re.sub(r"\{(\w+):\w+\}", r"{\1}", path)


def _body(e: Endpoint) -> dict[str, Any] | None:
    """The request body of a write: the same fields as a form or a JSON object (where a JSON
    body must give each field its JSON type)."""
    body = [p for p in e.params if p.where == "form"]
    if not body:
        return None
    content = {}
    for media, as_json in (("application/x-www-form-urlencoded", False), ("application/json", True)):
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {p.name: {**p.schema(json_body=as_json), "description": p.description} for p in body},
            "required": [p.name for p in body if p.required],
            **e.body_rules,
        }
        content[media] = {"schema": schema}
    # an empty body is refused when a field is required, or when the rules ask for one field at least
    return {"required": any(p.required for p in body) or bool(e.body_rules), "content": content}


def _answer_schema(e: Endpoint, media: str) -> dict[str, Any]:
    if media in e.media_schemas:
        return e.media_schemas[media]  # type: ignore[no-any-return]
    return (e.response or {"type": "object"}) if media == "application/json" else {"type": "string"}


def _operation(e: Endpoint, method: str, path: str, html: bool = False) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": e.summary.split("\n")[0],
        "description": e.summary,
        "operationId": f"{method.lower()}_{re.sub(r'[^a-z0-9]+', '_', path.lower()).strip('_')}"
        + ("_page" if html else ""),
    }
    if e.tags:
        op["tags"] = list(e.tags)
    params = []
    for name in re.findall(r"\{(\w+)\}", path):
        params.append(
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {"type": "string"},
                "description": next((p.description for p in e.params if p.name == name), ""),
            }
        )
    for p in e.params:
        if p.where == "query":
            required = p.required or (p.name in e.api_required and not html)
            params.append(
                {
                    "name": p.name,
                    "in": "query",
                    "required": required,
                    "schema": {**p.schema(), "minLength": 1} if required and p.type is str else p.schema(),
                    "description": p.description,
                }
            )
    if params:
        op["parameters"] = params
    body = _body(e)
    if body:
        op["requestBody"] = body
    if html:  # the page; JSON when asked (Accept: application/json, or a script's bearer token)
        content = {
            "text/html": {"schema": {"type": "string"}},
            "application/json": {"schema": e.response or {"type": "object"}},
        }
    else:
        content = {m: {"schema": _answer_schema(e, m)} for m in (e.media or ("application/json",))}
    ok = {"description": "OK", "content": content}
    err = {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    # what the guard answers before any view: a bad Host (400), a long URL (414), big headers (431)
    op["responses"] = {
        "200": ok,
        "400": err,
        "404": err,
        "414": err,
        "431": err,
        **{str(code): err for code in e.statuses},
    }
    if e.writes:
        op["security"] = [{"bearer": []}, {"csrf": []}]
        op["responses"].update({"401": err, "403": err, "413": err, "415": err, "429": err})
        if not e.json_twin:  # a form post from a page is answered with a redirect back
            op["responses"]["303"] = {"description": "back to the page the form was on"}
    return op


def build(endpoints: list[Endpoint]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    pages: list[Endpoint] = []
    for e in endpoints:
        if e.json_twin:
            pages.append(e)
        if not (e.json_twin or e.api_only or e.writes):
            continue  # HTML-only pages are not part of the API
        path = _oa_path(e.path + (".json" if e.json_twin else ""))
        for method in e.methods:
            if method != "HEAD":
                paths.setdefault(path, {})[method.lower()] = _operation(e, method, path)
    # a page whose address is also an API operation's (GET /triage beside POST /triage) is stated,
    # so that what the server answers at that address and what the document says agree
    for e in pages:
        path = _oa_path(e.path)
        if path in paths:
            for method in e.methods:
                if method != "HEAD" and method.lower() not in paths[path]:
                    paths[path][method.lower()] = _operation(e, method, path, html=True)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "paperatlas",
            "version": __version__,
            "description": "The paperatlas HTTP API: every page has a .json twin. Writes are POSTs that need "
            "either Authorization: Bearer <reader token> (scripts) or the CSRF cookie plus an "
            "X-CSRF-Token header (the browser). Errors are JSON: {error, fix, status}.",
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA},
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "a reader's API token"},
                "csrf": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-CSRF-Token",
                    "description": "must equal the pa_csrf cookie",
                },
            },
        },
    }


def openapi_json(request: Request) -> Response:
    w = web(request)
    doc = w.cache.get("openapi")
    if doc is None:
        doc = w.cache["openapi"] = build(w.endpoints)
    return json_response(doc)


def docs_page(request: Request) -> Response:
    doc = build(web(request).endpoints)
    return render(request, "docs.html", doc=doc)


ENDPOINTS = [
    Endpoint("/openapi.json", openapi_json, summary="This API's OpenAPI 3.1 document.", api_only=True, tags=["meta"]),
    Endpoint("/docs", docs_page, summary="The API documentation as a page."),
]
