#include "cli/bindingtermsoptions.h"

#include "cli/command.h"
#include "hub/domain/bindingterms.h"

namespace cloop::cli {

void BindingTermsOptions::addTo(Command &command) const
{
    command.addOptions({ m_ttl, m_virtualExecutor });
    if (m_scope == Scope::All)
        command.addOptions({ m_target, m_address });
}

Result<QJsonObject> BindingTermsOptions::read(const Command &command) const
{
    QJsonObject body;
    const auto copy = [&](const QCommandLineOption &option, const QString &field) {
        if (command.isSet(option))
            body.insert(field, command.value(option));
    };
    copy(m_ttl, QStringLiteral("ttl"));
    copy(m_virtualExecutor, QStringLiteral("virtual_executor"));
    if (m_scope == Scope::All) {
        copy(m_target, QStringLiteral("target"));
        copy(m_address, QStringLiteral("address"));
    }
    // Whether the forwarder carries a segment is the hub's to say; every
    // other rule is checked here as if it did.
    protocol::DeviceSpec segment;
    segment.kind = protocol::DeviceSpec::Kind::Segment;
    if (auto terms = hub::bindingterms::fromJson(body, segment); !terms)
        return terms.error();
    return body;
}

} // namespace cloop::cli
