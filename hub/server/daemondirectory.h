#pragma once

#include "common/protocol/controlmessage.h"
#include "common/result.h"

namespace cloop::hub {

class ExecutorService;
class ForwarderService;
struct ExecutorRecord;
struct ForwarderRecord;

// Who a daemon is, once its first message checked out.
struct AdmittedDaemon
{
    qint64 id = 0;
    QString name;
    protocol::Welcome welcome;
    std::optional<protocol::Enrolled> enrolled; // set when a token was just redeemed
};

// What a DaemonGateway needs to know about one kind of daemon: how to check
// its credential or redeem its token (through its service), and what to
// welcome it with.
class DaemonDirectory
{
public:
    virtual ~DaemonDirectory() = default;
    virtual protocol::PeerRole role() const = 0;
    virtual QString endpointPath() const = 0;
    virtual Result<AdmittedDaemon> authenticate(const protocol::Hello &hello) = 0;
    virtual Result<AdmittedDaemon> redeem(const protocol::Redeem &redeem) = 0;
    // Who says this hello, as authenticate() would answer, for a
    // connection that is not the daemon's session (a direct leg): nothing
    // is recorded of it.
    virtual Result<AdmittedDaemon> identify(const protocol::Hello &hello) = 0;
    virtual Status touchLastSeen(qint64 id) = 0;
};

class ForwarderDirectory final : public DaemonDirectory
{
public:
    ForwarderDirectory(ForwarderService &service, QString software)
        : m_service(service)
        , m_software(std::move(software))
    { }
    protocol::PeerRole role() const override { return protocol::PeerRole::Forwarder; }
    QString endpointPath() const override { return QStringLiteral("/api/forwarders/connect"); }
    Result<AdmittedDaemon> authenticate(const protocol::Hello &hello) override;
    Result<AdmittedDaemon> redeem(const protocol::Redeem &redeem) override;
    // A forwarder's leg of a device stream this hub relays (protocol 32 on).
    Result<AdmittedDaemon> identify(const protocol::Hello &hello) override;
    Status touchLastSeen(qint64 id) override;

private:
    Result<AdmittedDaemon> admit(const ForwarderRecord &record, const QString &software,
        int protocol, const QString &channel);

    ForwarderService &m_service;
    QString m_software;
};

// Executor agents report their capabilities in every hello; the hub keeps
// the latest report.
class ExecutorDirectory final : public DaemonDirectory
{
public:
    ExecutorDirectory(ExecutorService &service, QString software)
        : m_service(service)
        , m_software(std::move(software))
    { }
    protocol::PeerRole role() const override { return protocol::PeerRole::Executor; }
    QString endpointPath() const override { return QStringLiteral("/api/executors/connect"); }
    Result<AdmittedDaemon> authenticate(const protocol::Hello &hello) override;
    Result<AdmittedDaemon> redeem(const protocol::Redeem &redeem) override;
    Result<AdmittedDaemon> identify(const protocol::Hello &hello) override;
    Status touchLastSeen(qint64 id) override;

private:
    Result<AdmittedDaemon> admit(const ExecutorRecord &record, const QString &software,
        int protocol, const QJsonObject &capabilities, const QString &channel);

    ExecutorService &m_service;
    QString m_software;
};

} // namespace cloop::hub
