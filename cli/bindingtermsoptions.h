#pragma once

#include "common/result.h"

#include <QCommandLineOption>
#include <QJsonObject>

namespace cloop::cli {

class Command;

// The terms of a binding as options: --ttl and --virtual-executor, and for a
// network segment --target and --address. `cloop forward bind` and
// `request` take them all; `cloop approvals approve` only the two it may
// narrow.
class BindingTermsOptions
{
public:
    enum class Scope
    {
        All,
        Narrowing
    };

    explicit BindingTermsOptions(Scope scope)
        : m_scope(scope)
    { }
    void addTo(Command &command) const;
    // The admin API's fields for the options given, checked by the rules the
    // hub applies (TTL from 1s to 90d, interface names, CIDR addresses).
    Result<QJsonObject> read(const Command &command) const;

private:
    Scope m_scope;
    QCommandLineOption m_ttl { QStringLiteral("ttl"),
        QStringLiteral(
            "How long the binding lasts, 1s to 90d (default 24h): 90s, 30m, 8h, 7d, 1h30m."),
        QStringLiteral("DURATION") };
    QCommandLineOption m_virtualExecutor { QStringLiteral("virtual-executor"),
        QStringLiteral("Only for runs on this virtual executor."), QStringLiteral("NAME") };
    QCommandLineOption m_target { QStringLiteral("target"),
        QStringLiteral(
            "The sandbox interface: the segment's name inside the sandbox (default fwd0)."),
        QStringLiteral("IF") };
    QCommandLineOption m_address { QStringLiteral("address"),
        QStringLiteral("The sandbox's address on that interface, such as 10.77.0.2/24."),
        QStringLiteral("CIDR") };
};

} // namespace cloop::cli
