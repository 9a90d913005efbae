#include "hub/domain/bindingterms.h"

#include "common/util/duration.h"
#include "hub/storage/forwarderstore.h"

#include <QHostAddress>

namespace cloop::hub::bindingterms {

namespace {
Error invalid(const QString &code, const QString &message)
{
    return Error::make(code, message);
}

Result<QString> optionalString(const QJsonObject &body, QLatin1StringView key)
{
    const QJsonValue value = body.value(key);
    if (value.isUndefined() || value.isNull())
        return QString();
    if (!value.isString())
        return invalid(
            QStringLiteral("invalid_request"), QStringLiteral("\"%1\" must be a string").arg(key));
    return value.toString();
}
} // namespace

Result<std::chrono::seconds> parseTtl(const QJsonValue &value, std::chrono::seconds fallback)
{
    if (value.isUndefined() || value.isNull())
        return fallback;
    if (!value.isString())
        return invalid(QStringLiteral("invalid_duration"),
            QStringLiteral("\"ttl\" must be a duration such as 8h"));
    auto ttl = util::parseDuration(value.toString());
    if (!ttl)
        return ttl.error();
    if (ttl->count() < 1 || *ttl > kMaxTtl)
        return invalid(QStringLiteral("invalid_ttl"),
            QStringLiteral("a binding lasts from 1s to 90d; %1 is not allowed")
                .arg(value.toString()));
    return *ttl;
}

Status validateVirtualExecutor(const QString &name)
{
    if (name.isEmpty() || ForwarderStore::validateName(name))
        return {};
    return invalid(QStringLiteral("invalid_name"),
        QStringLiteral(
            "virtual executor \"%1\" must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
            .arg(name.left(80)));
}

Result<BindingTerms> fromJson(const QJsonObject &body, const protocol::DeviceSpec &device)
{
    BindingTerms terms;
    auto ttl = parseTtl(body.value(QLatin1String("ttl")), kDefaultTtl);
    if (!ttl)
        return ttl.error();
    terms.ttl = *ttl;

    auto executor = optionalString(body, QLatin1StringView("virtual_executor"));
    if (!executor)
        return executor.error();
    if (Status valid = validateVirtualExecutor(*executor); !valid)
        return valid.error();
    terms.virtualExecutor = *executor;

    auto target = optionalString(body, QLatin1StringView("target"));
    auto address = optionalString(body, QLatin1StringView("address"));
    if (!target)
        return target.error();
    if (!address)
        return address.error();
    if (target->isEmpty() && address->isEmpty())
        return terms;
    if (device.kind != protocol::DeviceSpec::Kind::Segment)
        return invalid(QStringLiteral("not_a_segment"),
            QStringLiteral(
                "--target and --address name the interface of a network segment inside the "
                "sandbox; this forwarder carries a USB device (%1)")
                .arg(device.describe()));
    terms.targetInterface = target->isEmpty() ? QString(kDefaultTarget) : *target;
    if (!protocol::isValidInterfaceName(terms.targetInterface))
        return invalid(QStringLiteral("invalid_target"),
            QStringLiteral(
                "\"%1\" is not a valid interface name (1-15 characters, no '/', ':' or spaces)")
                .arg(terms.targetInterface.left(40)));
    if (!address->isEmpty()) {
        const auto subnet = QHostAddress::parseSubnet(*address);
        if (!address->contains(QLatin1Char('/')) || subnet.first.isNull())
            return invalid(QStringLiteral("invalid_address"),
                QStringLiteral(
                    "\"%1\" is not an address with a prefix length, such as 10.77.0.2/24")
                    .arg(address->left(60)));
        // Kept as given (the host's address with its prefix), not as the network.
        terms.targetAddress = *address;
    }
    return terms;
}

} // namespace cloop::hub::bindingterms
