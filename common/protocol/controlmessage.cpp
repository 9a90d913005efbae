#include "common/protocol/controlmessage.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

namespace cloop::protocol {

namespace {

Error protocolError(const QString &message)
{
    return Error::make(QStringLiteral("protocol_error"), message);
}

// Reads typed fields out of one JSON object and remembers the first problem,
// so each message parser reads as a list of fields.
class FieldReader
{
public:
    FieldReader(const QJsonObject &object, QString type)
        : m_object(object), m_type(std::move(type))
    {
    }

    QString string(QLatin1StringView key, qsizetype maxLength = 4096, bool required = true)
    {
        const QJsonValue value = m_object.value(key);
        if (value.isUndefined() && !required)
            return {};
        if (!value.isString()) {
            fail(QStringLiteral("\"%1\" must be a string").arg(key));
            return {};
        }
        QString text = value.toString();
        if (required && text.isEmpty())
            fail(QStringLiteral("\"%1\" must not be empty").arg(key));
        else if (text.size() > maxLength)
            fail(QStringLiteral("\"%1\" is longer than %2 characters").arg(key).arg(maxLength));
        return text;
    }

    qint64 integer(QLatin1StringView key, qint64 min, qint64 max)
    {
        const QJsonValue value = m_object.value(key);
        const double number = value.toDouble(-1);
        if (!value.isDouble() || std::trunc(number) != number) {
            fail(QStringLiteral("\"%1\" must be an integer").arg(key));
            return 0;
        }
        // Range first: converting a double outside qint64 is undefined.
        // min and max lie within +-2^53, so they convert exactly.
        if (!(number >= static_cast<double>(min) && number <= static_cast<double>(max))) {
            fail(QStringLiteral("\"%1\" = %2 is outside %3..%4").arg(key).arg(number, 0, 'g', 17).arg(min).arg(max));
            return 0;
        }
        return static_cast<qint64>(number);
    }

    bool boolean(QLatin1StringView key)
    {
        const QJsonValue value = m_object.value(key);
        if (value.isUndefined())
            return false;
        if (!value.isBool()) {
            fail(QStringLiteral("\"%1\" must be true or false").arg(key));
            return false;
        }
        return value.toBool();
    }

    QJsonObject optionalObject(QLatin1StringView key)
    {
        const QJsonValue value = m_object.value(key);
        if (value.isUndefined() || value.isNull())
            return {};
        if (!value.isObject()) {
            fail(QStringLiteral("\"%1\" must be an object").arg(key));
            return {};
        }
        return value.toObject();
    }

    PeerRole role()
    {
        const QString name = string(QLatin1StringView("role"), 32);
        if (name == QLatin1String("forwarder"))
            return PeerRole::Forwarder;
        if (name == QLatin1String("executor"))
            return PeerRole::Executor;
        if (!m_error)
            fail(QStringLiteral("\"role\" must be \"forwarder\" or \"executor\""));
        return PeerRole::Forwarder;
    }

    void fail(const QString &problem)
    {
        if (!m_error)
            m_error = protocolError(QStringLiteral("%1 message: %2").arg(m_type, problem));
    }

    const QJsonObject &object() const { return m_object; }
    const std::optional<Error> &error() const { return m_error; }

private:
    const QJsonObject &m_object;
    QString m_type;
    std::optional<Error> m_error;
};

template<typename T>
Result<ControlMessage> finish(const FieldReader &reader, T message)
{
    if (reader.error())
        return *reader.error();
    return ControlMessage{std::move(message)};
}

constexpr qint64 kMaxProtocol = 10000;
constexpr qint64 kMaxId = (qint64(1) << 53);

} // namespace

QString roleName(PeerRole role)
{
    return role == PeerRole::Forwarder ? QStringLiteral("forwarder") : QStringLiteral("executor");
}

Result<ControlMessage> parseControlMessage(QByteArrayView utf8)
{
    if (utf8.size() > kMaxControlMessageSize)
        return protocolError(QStringLiteral("control message of %1 bytes exceeds %2")
                                     .arg(utf8.size())
                                     .arg(kMaxControlMessageSize));
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(utf8.toByteArray(), &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return protocolError(QStringLiteral("control message is not JSON: %1 at offset %2")
                                     .arg(parseError.errorString())
                                     .arg(parseError.offset));
    if (!document.isObject())
        return protocolError(QStringLiteral("control message is not a JSON object"));
    const QJsonObject object = document.object();
    const QJsonValue typeValue = object.value(QLatin1String("type"));
    if (!typeValue.isString())
        return protocolError(QStringLiteral("control message has no \"type\""));
    const QString type = typeValue.toString();
    FieldReader read(object, type);

    if (type == messagetype::kHello) {
        Hello hello;
        hello.protocol = static_cast<int>(read.integer(QLatin1StringView("protocol"), 1, kMaxProtocol));
        hello.software = read.string(QLatin1StringView("software"), 64);
        hello.role = read.role();
        hello.credential = read.string(QLatin1StringView("credential"), 256);
        hello.capabilities = read.optionalObject(QLatin1StringView("capabilities"));
        return finish(read, std::move(hello));
    }
    if (type == messagetype::kRedeem) {
        Redeem redeem;
        redeem.protocol = static_cast<int>(read.integer(QLatin1StringView("protocol"), 1, kMaxProtocol));
        redeem.software = read.string(QLatin1StringView("software"), 64);
        redeem.role = read.role();
        redeem.token = read.string(QLatin1StringView("token"), 256);
        redeem.capabilities = read.optionalObject(QLatin1StringView("capabilities"));
        return finish(read, std::move(redeem));
    }
    if (type == messagetype::kEnrolled) {
        Enrolled enrolled;
        enrolled.id = read.integer(QLatin1StringView("id"), 1, kMaxId);
        enrolled.name = read.string(QLatin1StringView("name"), 64);
        enrolled.credential = read.string(QLatin1StringView("credential"), 256);
        return finish(read, std::move(enrolled));
    }
    if (type == messagetype::kWelcome) {
        Welcome welcome;
        welcome.protocol = static_cast<int>(read.integer(QLatin1StringView("protocol"), 1, kMaxProtocol));
        welcome.software = read.string(QLatin1StringView("software"), 64);
        welcome.id = read.integer(QLatin1StringView("id"), 1, kMaxId);
        welcome.name = read.string(QLatin1StringView("name"), 64);
        const QJsonValue device = object.value(QLatin1String("device"));
        if (device.isObject()) {
            auto spec = DeviceSpec::fromJson(device.toObject());
            if (!spec)
                read.fail(spec.error().message);
            else
                welcome.device = *spec;
        } else if (!device.isUndefined() && !device.isNull()) {
            read.fail(QStringLiteral("\"device\" must be an object"));
        }
        return finish(read, std::move(welcome));
    }
    if (type == messagetype::kError) {
        ErrorMessage error;
        error.code = read.string(QLatin1StringView("code"), 64);
        error.message = read.string(QLatin1StringView("message"), 4096);
        error.permanent = read.boolean(QLatin1StringView("permanent"));
        return finish(read, std::move(error));
    }
    return protocolError(QStringLiteral("unknown control message type \"%1\"").arg(type.left(64)));
}

namespace {
struct Serializer
{
    QJsonObject operator()(const Hello &m) const
    {
        QJsonObject object{{QStringLiteral("type"), messagetype::kHello},
                           {QStringLiteral("protocol"), m.protocol},
                           {QStringLiteral("software"), m.software},
                           {QStringLiteral("role"), roleName(m.role)},
                           {QStringLiteral("credential"), m.credential}};
        if (!m.capabilities.isEmpty())
            object.insert(QStringLiteral("capabilities"), m.capabilities);
        return object;
    }
    QJsonObject operator()(const Redeem &m) const
    {
        QJsonObject object{{QStringLiteral("type"), messagetype::kRedeem},
                           {QStringLiteral("protocol"), m.protocol},
                           {QStringLiteral("software"), m.software},
                           {QStringLiteral("role"), roleName(m.role)},
                           {QStringLiteral("token"), m.token}};
        if (!m.capabilities.isEmpty())
            object.insert(QStringLiteral("capabilities"), m.capabilities);
        return object;
    }
    QJsonObject operator()(const Enrolled &m) const
    {
        return {{QStringLiteral("type"), messagetype::kEnrolled},
                {QStringLiteral("id"), m.id},
                {QStringLiteral("name"), m.name},
                {QStringLiteral("credential"), m.credential}};
    }
    QJsonObject operator()(const Welcome &m) const
    {
        QJsonObject object{{QStringLiteral("type"), messagetype::kWelcome},
                           {QStringLiteral("protocol"), m.protocol},
                           {QStringLiteral("software"), m.software},
                           {QStringLiteral("id"), m.id},
                           {QStringLiteral("name"), m.name}};
        if (m.device)
            object.insert(QStringLiteral("device"), m.device->toJson());
        return object;
    }
    QJsonObject operator()(const ErrorMessage &m) const
    {
        return {{QStringLiteral("type"), messagetype::kError},
                {QStringLiteral("code"), m.code},
                {QStringLiteral("message"), m.message},
                {QStringLiteral("permanent"), m.permanent}};
    }
};
} // namespace

QByteArray serializeControlMessage(const ControlMessage &message)
{
    return QJsonDocument(std::visit(Serializer{}, message)).toJson(QJsonDocument::Compact);
}

QString controlMessageType(const ControlMessage &message)
{
    return std::visit(Serializer{}, message).value(QLatin1String("type")).toString();
}

} // namespace cloop::protocol
