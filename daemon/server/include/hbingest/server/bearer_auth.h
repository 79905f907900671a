#pragma once
// Bearer-token check for HTTP endpoints.

#include <string>

#include "hbingest/server/http_server.h"

namespace hbingest::server {

// True when `request` carries "Authorization: Bearer <token>" with exactly `token`. The comparison
// takes the same time wherever the first difference is, so the token cannot be guessed byte by
// byte from response times. Thread-safe.
bool bearer_token_matches(const HttpRequest& request, const std::string& token);

// The 401 response to send when it does not match.
HttpResponse unauthorized_response();

}  // namespace hbingest::server
