//! `GET /openapi.json`: the OpenAPI 3.0 description of exactly what this server serves
//! (paths, parameters, bodies, and every status a route can answer).

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use wikisuggest_records::params::{LinkOptions, RankMethod, SearchAlgorithm, TranslationParams};

use crate::reply::json_response;

pub async fn openapi() -> Response {
    json_response(StatusCode::OK, &document())
}

fn json_content(schema: Value) -> Value {
    json!({ "application/json": { "schema": schema } })
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn reply(description: &str, schema: &str) -> Value {
    json!({ "description": description, "content": json_content(reference(schema)) })
}

fn too_many() -> Value {
    json!({
        "description": "Rate limit exceeded; retry after the given number of seconds",
        "headers": { "Retry-After": { "schema": { "type": "integer" } } },
        "content": { "text/plain": { "schema": { "type": "string" } } }
    })
}

fn query(name: &str, schema: Value, description: &str) -> Value {
    json!({ "name": name, "in": "query", "required": false, "schema": schema,
            "description": description })
}

fn link_parameters(with_revision: bool) -> Value {
    let mut params = vec![
        json!({"name": "project", "in": "path", "required": true,
               "schema": {"type": "string"}, "example": "wikipedia",
               "description": "Project; `wikipedia` maps to `<domain>wiki`"}),
        json!({"name": "domain", "in": "path", "required": true,
               "schema": {"type": "string"}, "example": "en",
               "description": "Project subdomain, usually the language code"}),
        json!({"name": "page_title", "in": "path", "required": true,
               "schema": {"type": "string"}, "example": "Anarchism",
               "description": "Page title (may contain `/`)"}),
        query(
            "language_code",
            json!({"type": "string"}),
            "Defaults to the domain",
        ),
        query(
            "threshold",
            json!({"type": "number", "default": LinkOptions::DEFAULT_THRESHOLD}),
            "Minimum score",
        ),
        query(
            "sections_to_exclude",
            json!({"type": "array", "items": {"type": "string"}}),
            "Section names to skip (repeat the key); `%LEAD%` is the lead section",
        ),
        query(
            "max_recommendations",
            json!({"type": "integer", "default": LinkOptions::DEFAULT_MAX_RECOMMENDATIONS}),
            "0 or negative: unlimited",
        ),
    ];
    if with_revision {
        params.push(query(
            "revision",
            json!({"type": "integer"}),
            "Revision id; a value that is not an integer means the latest revision",
        ));
    }
    Value::Array(params)
}

fn link_responses() -> Value {
    json!({
        "200": reply("Link recommendations", "LinkRecommendationSet"),
        "400": reply("Malformed parameter or body", "Message"),
        "401": reply("Missing, expired or invalid bearer token", "Unauthorized"),
        "404": reply("Wiki without datasets, or page not found", "Message"),
        "408": { "description": "The request took too long" },
        "413": { "description": "Body too large" },
        "429": too_many(),
    })
}

fn translation_parameters() -> Value {
    let integer = || json!({"type": "integer"});
    let boolean = || json!({"type": "boolean", "default": false});
    json!([
        {"name": "source", "in": "query", "required": true, "schema": {"type": "string"},
         "description": "Source wiki language code"},
        {"name": "target", "in": "query", "required": true, "schema": {"type": "string"},
         "description": "Target wiki language code; must differ from `source`"},
        query("count", json!({"type": "integer", "default": TranslationParams::DEFAULT_COUNT}),
              "Number of items; negative drops items from the end"),
        query("seed", json!({"type": "string"}),
              "Seed titles separated by `|`; with `collections=true`, a collection name \
               (any case; a group prefix selects every `<seed>/…` collection)"),
        query("topic", json!({"type": "string"}),
              "Topics: `|` = or, `+` (sent as %2B) = and; lower-cased, spaces become `-`"),
        query("country", json!({"type": "string"}),
              "ISO 3166 alpha-3 codes: `|` = or, `+` (sent as %2B) = and"),
        query("featured_collection", json!({"type": "string"}),
              "A collection whose articles are interleaved 1:1 (with collections, or with \
               seed/topic/country)"),
        query("collections", boolean(), "Recommend from page collections"),
        query("lead_section", boolean(),
              "Size bounds apply to the lead section; items carry `lead_section_size`"),
        query("include_pageviews", boolean(), "Fill `pageviews`"),
        query("search_algorithm",
              json!({"type": "string", "enum": ["morelike", "mostpopular"],
                     "default": SearchAlgorithm::default().as_str()}),
              "Validated, without effect (the mode follows from the other parameters)"),
        query("rank_method",
              json!({"type": "string", "enum": ["default", "sitelinks"],
                     "default": RankMethod::default().as_str()}),
              "`default` shuffles; `sitelinks` orders by interlanguage links"),
        query("min_size", integer(), "Inclusive lower bound in bytes (article, or lead section)"),
        query("max_size", integer(), "Inclusive upper bound in bytes (article, or lead section)"),
        query("continue_offset", integer(),
              "Single-collection mode: where the page starts (the previous answer's \
               `continue_offset`; that item comes again)"),
        query("continue_seed", integer(),
              "Single-collection mode: the shuffle seed (the previous answer's `continue_seed`)"),
    ])
}

pub fn document() -> Value {
    let oauth_error = reply("OAuth 2.0 error", "OAuthError");
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "wikisuggest reference server",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Local implementation of the link recommendation, translation \
                            recommendation and OAuth 2.0 contract."
        },
        "paths": {
            "/service/linkrecommendation/v1/linkrecommendations/{project}/{domain}/{page_title}": {
                "get": {
                    "operationId": "getLinkRecommendations",
                    "parameters": link_parameters(true),
                    "responses": link_responses(),
                },
                "post": {
                    "operationId": "getLinkRecommendationsForRevision",
                    "security": [{ "bearerAuth": [] }],
                    "parameters": link_parameters(false),
                    "requestBody": {
                        "required": true,
                        "content": json_content(reference("LinkRecommendationInput")),
                    },
                    "responses": link_responses(),
                }
            },
            "/service/lw/recommendation/api/v1/translation": {
                "get": {
                    "operationId": "getTranslationRecommendations",
                    "parameters": translation_parameters(),
                    "responses": {
                        "200": {
                            "description": "Articles missing in the target wiki: a bare array \
                                (`--translation-shape array`, the default) or the envelope \
                                (`--translation-shape envelope`)",
                            "content": json_content(json!({
                                "oneOf": [
                                    { "type": "array", "items": reference("TranslationRecommendation") },
                                    reference("TranslationRecommendationResponse"),
                                ]
                            })),
                        },
                        "401": reply("Expired or invalid bearer token", "Unauthorized"),
                        "408": { "description": "The request took too long" },
                        "422": reply("Invalid parameters", "ValidationError"),
                        "429": too_many(),
                    }
                }
            },
            "/service/lw/recommendation/api/v1/translation/page-collections": {
                "get": {
                    "operationId": "getPageCollections",
                    "responses": {
                        "200": {
                            "description": "Every page collection",
                            "content": json_content(json!({
                                "type": "array", "items": reference("PageCollection")
                            })),
                        },
                        "401": reply("Expired or invalid bearer token", "Unauthorized"),
                        "429": too_many(),
                    }
                }
            },
            "/service/lw/recommendation/api/v1/translation/page-collection-groups": {
                "get": {
                    "operationId": "getPageCollectionGroups",
                    "responses": {
                        "200": {
                            "description": "Collections grouped by the part of their name \
                                before `/` (groups of two or more), plus `ungrouped`",
                            "content": json_content(json!({
                                "type": "object",
                                "required": ["ungrouped"],
                                "additionalProperties": {
                                    "type": "array", "items": reference("PageCollection")
                                }
                            })),
                        },
                        "401": reply("Expired or invalid bearer token", "Unauthorized"),
                        "429": too_many(),
                    }
                }
            },
            "/service/lw/recommendation/api/v1/translation/page-collection-membership": {
                "get": {
                    "operationId": "getPageCollectionMembership",
                    "parameters": [
                        {"name": "collection", "in": "query", "required": true,
                         "schema": {"type": "string"},
                         "description": "Collection name (any case)"},
                        query("language", json!({"type": "string"}),
                              "Language of `titles`; give both, or `qids`"),
                        query("titles", json!({"type": "string"}), "Titles separated by `|`"),
                        query("qids", json!({"type": "string"}),
                              "Wikidata ids separated by `|`"),
                    ],
                    "responses": {
                        "200": {
                            "description": "Each title or id asked about: whether the \
                                collection holds it",
                            "content": json_content(json!({
                                "type": "object", "additionalProperties": { "type": "boolean" }
                            })),
                        },
                        "401": reply("Expired or invalid bearer token", "Unauthorized"),
                        "422": reply("Missing collection, neither or both forms, or an \
                                      unknown language", "ValidationError"),
                        "429": too_many(),
                    }
                }
            },
            "/w/rest.php/oauth2/access_token": {
                "post": {
                    "operationId": "getAccessToken",
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": reference("TokenRequest")
                            }
                        }
                    },
                    "responses": {
                        "200": reply("Tokens", "TokenResponse"),
                        "400": oauth_error.clone(),
                        "401": oauth_error,
                        "408": { "description": "The request took too long" },
                        "413": { "description": "Body too large" },
                        "415": reply("Body not form-encoded", "RestError"),
                    }
                }
            },
            "/w/rest.php/oauth2/authorize": {
                "get": {
                    "operationId": "authorize",
                    "parameters": [
                        query("response_type", json!({"type": "string", "enum": ["code"]}), ""),
                        query("client_id", json!({"type": "string"}), ""),
                        query("redirect_uri", json!({"type": "string"}), ""),
                        query("scope", json!({"type": "string"}), ""),
                        query("state", json!({"type": "string"}), ""),
                        query("code_challenge", json!({"type": "string"}), ""),
                        query("code_challenge_method",
                              json!({"type": "string", "enum": ["plain", "S256"]}), ""),
                    ],
                    "responses": {
                        "302": { "description": "Redirect to the client with `code` or `error`" },
                        "400": { "description": "Error page", "content": { "text/html": { "schema": { "type": "string" } } } },
                        "401": { "description": "Unknown client or redirect URI", "content": { "text/html": { "schema": { "type": "string" } } } },
                    }
                }
            },
            "/healthz": {
                "get": {
                    "operationId": "healthz",
                    "responses": { "200": { "description": "Alive", "content": { "text/html": { "schema": { "type": "string" } } } } }
                }
            },
            "/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "responses": { "200": { "description": "This document", "content": json_content(json!({"type": "object"})) } }
                }
            }
        },
        "components": {
            "securitySchemes": {
                "bearerAuth": { "type": "http", "scheme": "bearer" }
            },
            "schemas": schemas(),
        }
    })
}

fn schemas() -> Value {
    json!({
        "LinkRecommendationSet": {
            "type": "object",
            "required": ["links", "links_count", "meta", "page_title", "pageid", "revid"],
            "properties": {
                "links": { "type": "array", "items": reference("LinkRecommendation") },
                "links_count": { "type": "integer" },
                "meta": reference("Meta"),
                "page_title": { "type": "string" },
                "pageid": { "description": "Echoed as received" },
                "revid": { "type": "integer" },
            }
        },
        "LinkRecommendation": {
            "type": "object",
            "required": ["context_after", "context_before", "link_index", "link_target",
                         "link_text", "match_index", "score", "wikitext_offset"],
            "properties": {
                "context_after": { "type": "string" },
                "context_before": { "type": "string" },
                "link_index": { "type": "integer" },
                "link_target": { "type": "string" },
                "link_text": { "type": "string" },
                "match_index": { "type": "integer" },
                "score": { "type": "number" },
                "wikitext_offset": { "type": "integer" },
            }
        },
        "Meta": {
            "type": "object",
            "required": ["application_version", "dataset_checksums", "format_version"],
            "properties": {
                "application_version": { "type": "string" },
                "dataset_checksums": {
                    "type": "object",
                    "properties": {
                        "anchors": { "type": "string", "nullable": true },
                        "model": { "type": "string", "nullable": true },
                        "pageids": { "type": "string", "nullable": true },
                        "redirects": { "type": "string", "nullable": true },
                        "w2vfiltered": { "type": "string", "nullable": true },
                    }
                },
                "format_version": { "type": "integer" },
            }
        },
        "LinkRecommendationInput": {
            "type": "object",
            "required": ["wikitext", "revid", "pageid"],
            "properties": {
                "wikitext": { "type": "string" },
                "revid": { "type": "integer" },
                "pageid": { "type": "integer" },
                "sections_to_exclude": { "type": "array", "items": { "type": "string" } },
            }
        },
        "Message": {
            "type": "object",
            "required": ["message"],
            "properties": {
                "message": { "type": "string" },
                "valid_project_domain_pairs": { "type": "array", "items": { "type": "string" } },
            }
        },
        "Unauthorized": {
            "type": "object",
            "required": ["httpCode", "httpReason"],
            "properties": {
                "httpCode": { "type": "integer" },
                "httpReason": { "type": "string" },
            }
        },
        "TranslationRecommendation": {
            "type": "object",
            "description": "The array shape carries the first five fields; the envelope all",
            "required": ["title", "pageviews", "wikidata_id", "rank", "langlinks_count"],
            "properties": {
                "title": { "type": "string" },
                "pageviews": { "type": "integer" },
                "wikidata_id": { "type": "string", "nullable": true },
                "rank": { "type": "integer" },
                "langlinks_count": { "type": "integer" },
                "size": { "type": "integer", "nullable": true },
                "lead_section_size": { "type": "integer", "nullable": true },
                "collection": {
                    "allOf": [reference("PageCollectionMetadata")], "nullable": true
                },
            }
        },
        "TranslationRecommendationResponse": {
            "type": "object",
            "required": ["recommendations", "continue_offset", "continue_seed"],
            "properties": {
                "recommendations": {
                    "type": "array", "items": reference("TranslationRecommendation")
                },
                "continue_offset": {
                    "type": "integer", "nullable": true,
                    "description": "Single-collection mode: send back to continue; -1 at the end"
                },
                "continue_seed": { "type": "integer", "nullable": true },
            }
        },
        "PageCollection": {
            "type": "object",
            "required": ["name", "articles_count"],
            "properties": {
                "name": { "type": "string" },
                "description": { "type": "string", "nullable": true },
                "end_date": { "type": "string", "nullable": true },
                "articles_count": { "type": "integer" },
            }
        },
        "PageCollectionMetadata": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": { "type": "string" },
                "description": { "type": "string", "nullable": true },
                "end_date": { "type": "string", "nullable": true },
                "articles_count": { "type": "integer" },
                "articles_by_language_count": {
                    "type": "object", "additionalProperties": { "type": "integer" }
                },
            }
        },
        "ValidationError": {
            "type": "object",
            "required": ["detail"],
            "properties": {
                "detail": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["type", "loc", "msg"],
                        "properties": {
                            "type": { "type": "string" },
                            "loc": { "type": "array", "items": { "type": "string" } },
                            "msg": { "type": "string" },
                            "input": {},
                        }
                    }
                }
            }
        },
        "TokenRequest": {
            "type": "object",
            "required": ["grant_type"],
            "properties": {
                "grant_type": { "type": "string",
                    "enum": ["client_credentials", "authorization_code", "refresh_token"] },
                "client_id": { "type": "string" },
                "client_secret": { "type": "string" },
                "code": { "type": "string" },
                "redirect_uri": { "type": "string" },
                "code_verifier": { "type": "string" },
                "refresh_token": { "type": "string" },
                "scope": { "type": "string" },
            }
        },
        "TokenResponse": {
            "type": "object",
            "required": ["token_type", "expires_in", "access_token"],
            "properties": {
                "token_type": { "type": "string", "enum": ["Bearer"] },
                "expires_in": { "type": "integer" },
                "access_token": { "type": "string" },
                "refresh_token": { "type": "string" },
            }
        },
        "OAuthError": {
            "type": "object",
            "required": ["error", "error_description"],
            "properties": {
                "error": { "type": "string" },
                "error_description": { "type": "string" },
                "hint": { "type": "string" },
            }
        },
        "RestError": {
            "type": "object",
            "required": ["errorKey", "messageTranslations", "httpCode", "httpReason"],
            "properties": {
                "errorKey": { "type": "string" },
                "messageTranslations": { "type": "object",
                                          "additionalProperties": { "type": "string" } },
                "httpCode": { "type": "integer" },
                "httpReason": { "type": "string" },
            }
        }
    })
}
