#pragma once

#include "common/api/executor.h"
#include "common/api/forwarder.h"

namespace cloop::api {

// The answer to enrolling a daemon (POST /api/forwarders, POST
// /api/executors): its record, and the one-time bundle that is shown once.
template <typename Daemon> struct Enrollment
{
    Daemon daemon;
    QString bundle; // "cloopfwd1.…" or "cloopexe1.…"
    QString command; // one shell line that starts the daemon with it
    QString installCommand; // the same for the machine's service, as root
    QDateTime tokenExpiresAt;

    static Result<Enrollment> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const Enrollment &, const Enrollment &) = default;
};

using ForwarderEnrollment = Enrollment<Forwarder>;
using ExecutorEnrollment = Enrollment<Executor>;

} // namespace cloop::api
