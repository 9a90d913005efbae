#include "hub/server/daemondirectory.h"

#include "common/protocol/agentcapabilities.h"
#include "common/protocol/protocolversion.h"
#include "hub/domain/executorservice.h"
#include "hub/domain/forwarderservice.h"

namespace cloop::hub {

using namespace protocol;

Result<AdmittedDaemon> ForwarderDirectory::admit(
    const ForwarderRecord &record, const QString &software, int protocol, const QString &channel)
{
    if (Status recorded = m_service.recordHello(record.id, software, protocol, channel); !recorded)
        return recorded.error();
    AdmittedDaemon admitted { record.id, record.name, {}, std::nullopt };
    admitted.welcome = Welcome { kVersion, m_software, record.id, record.name, record.device, {} };
    return admitted;
}

Result<AdmittedDaemon> ForwarderDirectory::authenticate(const Hello &hello)
{
    auto record = m_service.authenticate(hello.credential);
    if (!record)
        return record.error();
    return admit(*record, hello.software, hello.protocol, hello.channel);
}

Result<AdmittedDaemon> ForwarderDirectory::redeem(const Redeem &redeem)
{
    auto redeemed = m_service.redeem(redeem.token);
    if (!redeemed)
        return redeemed.error();
    auto admitted = admit(redeemed->forwarder, redeem.software, redeem.protocol, redeem.channel);
    if (admitted)
        admitted->enrolled
            = Enrolled { redeemed->forwarder.id, redeemed->forwarder.name, redeemed->credential };
    return admitted;
}

Result<AdmittedDaemon> ForwarderDirectory::identify(const Hello &hello)
{
    auto record = m_service.authenticate(hello.credential);
    if (!record)
        return record.error();
    AdmittedDaemon admitted { record->id, record->name, {}, std::nullopt };
    admitted.welcome
        = Welcome { kVersion, m_software, record->id, record->name, record->device, {} };
    return admitted;
}

Status ForwarderDirectory::touchLastSeen(qint64 id)
{
    return m_service.touchLastSeen(id);
}

Result<AdmittedDaemon> ExecutorDirectory::admit(const ExecutorRecord &record,
    const QString &software, int protocol, const QJsonObject &capabilities, const QString &channel)
{
    // The agent's report decides what it is given later; it is read the way
    // every input from a daemon is, and kept only in its checked form.
    QJsonObject checked;
    if (!capabilities.isEmpty()) {
        auto parsed = AgentCapabilities::fromJson(capabilities);
        if (!parsed)
            return Error::make(QStringLiteral("protocol_error"),
                QStringLiteral("the agent's capabilities are malformed: %1")
                    .arg(parsed.error().message));
        checked = parsed->toJson();
    }
    if (Status recorded = m_service.recordHello(record.id, software, protocol, checked, channel);
        !recorded)
        return recorded.error();
    AdmittedDaemon admitted { record.id, record.name, {}, std::nullopt };
    admitted.welcome = Welcome { kVersion, m_software, record.id, record.name, std::nullopt, {} };
    return admitted;
}

Result<AdmittedDaemon> ExecutorDirectory::authenticate(const Hello &hello)
{
    auto record = m_service.authenticate(hello.credential);
    if (!record)
        return record.error();
    return admit(*record, hello.software, hello.protocol, hello.capabilities, hello.channel);
}

Result<AdmittedDaemon> ExecutorDirectory::redeem(const Redeem &redeem)
{
    auto redeemed = m_service.redeem(redeem.token);
    if (!redeemed)
        return redeemed.error();
    auto admitted = admit(
        redeemed->first, redeem.software, redeem.protocol, redeem.capabilities, redeem.channel);
    if (admitted)
        admitted->enrolled
            = Enrolled { redeemed->first.id, redeemed->first.name, redeemed->second };
    return admitted;
}

Result<AdmittedDaemon> ExecutorDirectory::identify(const Hello &hello)
{
    auto record = m_service.authenticate(hello.credential);
    if (!record)
        return record.error();
    AdmittedDaemon admitted { record->id, record->name, {}, std::nullopt };
    admitted.welcome = Welcome { kVersion, m_software, record->id, record->name, std::nullopt, {} };
    return admitted;
}

Status ExecutorDirectory::touchLastSeen(qint64 id)
{
    return m_service.touchLastSeen(id);
}

} // namespace cloop::hub
