#pragma once
// The SchemaRegistry of a real registry: the Confluent REST API over HTTP(S) (Confluent Schema
// Registry, Apicurio's /apis/ccompat/v7, Karapace, Redpanda's). Two calls:
//   GET {url}/schemas/ids/{id}                 -> {schema, schemaType, references}
//   GET {url}/subjects/{subject}/versions/{v}  -> {id, subject, version, schema, schemaType, references}
//
// How each answer is classified (schema_registry.h says what the two kinds of "no" mean):
//  * 404 with the API's error body (error_code 40401 subject, 40402 version, 40403 schema):
//    SchemaNotFound.
//  * Every other failure is SchemaRegistryUnavailable: no connection, TLS failure, timeout, 5xx,
//    401/403 ("credentials refused"), a redirect, an answer over max_response_bytes, an answer
//    that is not the API's JSON, and a 404 WITHOUT the API's error body: that is what a wrong
//    `url` gets (Apicurio answers a path outside its API with error_code 404), and treating it
//    as "schema not found" would dead-letter every event while the URL is wrong.
// Messages name the URL (never the password) and the id or subject/version asked for.
//
// Not cached: the caller (the input formats' schema cache) keeps what it fetched.
//
// Thread safety: every call uses its own connection, so concurrent calls neither share state nor
// wait for each other.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "hbingest/connectors/schema_registry.h"

namespace hbingest::connectors {

struct HttpSchemaRegistryOptions {
  // Base URL of the API, scheme http or https, without credentials:
  // "http://127.0.0.1:18081/apis/ccompat/v7", "https://registry.example.com".
  std::string url;
  // HTTP basic authentication; none when basic_auth_user is empty.
  std::string basic_auth_user;
  std::string basic_auth_password;
  // https: the CA bundle that signs the registry's certificate (the system's when empty), and a
  // client certificate and key for mutual TLS (both or neither).
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // Bounds the whole exchange: connecting, the status line and headers, and the body.
  std::chrono::milliseconds timeout{5000};
  // An answer longer than this is abandoned as it arrives (a registry answering gigabytes costs
  // this much at most; its status line and headers have a small bound of their own). Schemas are kilobytes; Confluent's
  // own limit on a schema is 1 MiB-ish.
  std::size_t max_response_bytes = std::size_t{16} << 20;
};

// Throws std::invalid_argument for options it cannot use (a URL that is not http(s)://host...,
// credentials inside the URL, a certificate without its key, a client certificate or key that
// does not load); the message never contains the password.
std::unique_ptr<SchemaRegistry> make_http_schema_registry(const HttpSchemaRegistryOptions& options);

}  // namespace hbingest::connectors
