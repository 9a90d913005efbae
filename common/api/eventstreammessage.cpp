#include "common/api/eventstreammessage.h"

#include <QJsonDocument>

namespace cloop::api {

namespace {
using Type = EventStreamMessage::Type;
constexpr std::array<NamedValue<Type>, 4> kTypes { {
    { Type::Subscribe, QLatin1StringView("subscribe") },
    { Type::Subscribed, QLatin1StringView("subscribed") },
    { Type::Event, QLatin1StringView("event") },
    { Type::Error, QLatin1StringView("error") },
} };
} // namespace

EventStreamMessage EventStreamMessage::subscribe(const QString &token)
{
    EventStreamMessage message;
    message.type = Type::Subscribe;
    message.token = token;
    return message;
}

EventStreamMessage EventStreamMessage::subscribed(const QString &user)
{
    EventStreamMessage message;
    message.type = Type::Subscribed;
    message.user = user;
    return message;
}

EventStreamMessage EventStreamMessage::eventOf(
    const QString &event, const QDateTime &at, QJsonObject data)
{
    EventStreamMessage message;
    message.type = Type::Event;
    message.event = event;
    message.at = at;
    message.data = std::move(data);
    return message;
}

EventStreamMessage EventStreamMessage::error(const Error &error)
{
    EventStreamMessage message;
    message.type = Type::Error;
    message.code = error.code;
    message.message = error.message;
    message.permanent = true;
    return message;
}

QLatin1StringView EventStreamMessage::typeName(Type type)
{
    return nameIn(kTypes, type);
}

Result<EventStreamMessage> EventStreamMessage::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("event stream message"));
    EventStreamMessage message;
    const QString type = read.text(QLatin1StringView("type"));
    if (const auto known = valueIn(kTypes, type))
        message.type = *known;
    else
        read.fail(QStringLiteral("\"type\" is not a message this version knows: \"%1\"")
                      .arg(type.left(40)));
    switch (message.type) {
    case Type::Subscribe:
        if (!object.value(QLatin1StringView("token")).isString())
            read.fail(QStringLiteral("\"token\" must be a string"));
        message.token = read.text(QLatin1StringView("token"));
        break;
    case Type::Subscribed:
        message.user = read.text(QLatin1StringView("user"));
        break;
    case Type::Event:
        message.event = read.text(QLatin1StringView("event"));
        message.at = read.time(QLatin1StringView("at"));
        message.data = read.object(QLatin1StringView("data"));
        break;
    case Type::Error:
        message.code = read.text(QLatin1StringView("code"));
        message.message = read.text(QLatin1StringView("message"));
        message.permanent = read.flag(QLatin1StringView("permanent"));
        break;
    }
    return read.finish(std::move(message));
}

Result<EventStreamMessage> EventStreamMessage::fromText(QByteArrayView utf8)
{
    QJsonParseError error {};
    const QJsonDocument document = QJsonDocument::fromJson(utf8.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return Error::make(QStringLiteral("invalid_record"),
            QStringLiteral("an event stream message is a JSON object"));
    return fromJson(document.object());
}

QJsonObject EventStreamMessage::toJson() const
{
    QJsonObject object { { QLatin1StringView("type"), typeName(type) } };
    switch (type) {
    case Type::Subscribe:
        object.insert(QLatin1StringView("token"), token);
        break;
    case Type::Subscribed:
        object.insert(QLatin1StringView("user"), user);
        break;
    case Type::Event:
        object.insert(QLatin1StringView("event"), event);
        object.insert(QLatin1StringView("at"), timeOrNull(at));
        object.insert(QLatin1StringView("data"), data);
        break;
    case Type::Error:
        object.insert(QLatin1StringView("code"), code);
        object.insert(QLatin1StringView("message"), message);
        object.insert(QLatin1StringView("permanent"), permanent);
        break;
    }
    return object;
}

QString EventStreamMessage::toText() const
{
    return QString::fromUtf8(QJsonDocument(toJson()).toJson(QJsonDocument::Compact));
}

} // namespace cloop::api
