#pragma once

#include "common/api/binding.h"
#include "common/api/bindingrequest.h"

namespace cloop::api {

// The answer to approving a request (POST /api/requests/{id}/approve): the
// request as decided, and the binding the approval made.
struct Approval
{
    BindingRequest request;
    Binding binding;

    static Result<Approval> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Approval &, const Approval &) = default;
};

} // namespace cloop::api
