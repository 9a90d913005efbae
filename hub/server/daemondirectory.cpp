#include "hub/server/daemondirectory.h"

#include "common/protocol/agentcapabilities.h"
#include "common/protocol/protocolversion.h"
#include "hub/storage/executorstore.h"
#include "hub/storage/forwarderstore.h"

namespace cloop::hub {

using namespace protocol;

Result<AdmittedDaemon> ForwarderDirectory::admit(qint64 id)
{
    auto record = m_store.find(id);
    if (!record)
        return record.error();
    AdmittedDaemon admitted { record->id, record->name, {}, std::nullopt };
    admitted.welcome = Welcome { kVersion, m_software, record->id, record->name, record->device };
    return admitted;
}

Result<AdmittedDaemon> ForwarderDirectory::authenticate(const Hello &hello)
{
    auto record = m_store.authenticate(hello.credential);
    if (!record)
        return record.error();
    return admit(record->id);
}

Result<AdmittedDaemon> ForwarderDirectory::redeem(const Redeem &redeem)
{
    auto redeemed = m_store.redeem(redeem.token);
    if (!redeemed)
        return redeemed.error();
    auto admitted = admit(redeemed->forwarder.id);
    if (admitted)
        admitted->enrolled
            = Enrolled { redeemed->forwarder.id, redeemed->forwarder.name, redeemed->credential };
    return admitted;
}

Status ForwarderDirectory::touchLastSeen(qint64 id)
{
    return m_store.touchLastSeen(id);
}

Result<AdmittedDaemon> ExecutorDirectory::admit(
    qint64 id, const QString &software, int protocol, const QJsonObject &capabilities)
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
    if (Status recorded = m_store.recordHello(id, software, protocol, checked); !recorded)
        return recorded.error();
    auto record = m_store.find(id);
    if (!record)
        return record.error();
    AdmittedDaemon admitted { record->id, record->name, {}, std::nullopt };
    admitted.welcome = Welcome { kVersion, m_software, record->id, record->name, std::nullopt };
    return admitted;
}

Result<AdmittedDaemon> ExecutorDirectory::authenticate(const Hello &hello)
{
    auto record = m_store.authenticate(hello.credential);
    if (!record)
        return record.error();
    return admit(record->id, hello.software, hello.protocol, hello.capabilities);
}

Result<AdmittedDaemon> ExecutorDirectory::redeem(const Redeem &redeem)
{
    auto redeemed = m_store.redeem(redeem.token);
    if (!redeemed)
        return redeemed.error();
    auto admitted
        = admit(redeemed->first.id, redeem.software, redeem.protocol, redeem.capabilities);
    if (admitted)
        admitted->enrolled
            = Enrolled { redeemed->first.id, redeemed->first.name, redeemed->second };
    return admitted;
}

Status ExecutorDirectory::touchLastSeen(qint64 id)
{
    return m_store.touchLastSeen(id);
}

} // namespace cloop::hub
