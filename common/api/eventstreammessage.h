#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// A text message of the hub's event stream (wss://HUB/api/events): the
// subscriber's first, the hub's answer to it, the events, and the error
// that ends a subscription.
struct EventStreamMessage
{
    enum class Type
    {
        Subscribe, // subscriber -> hub: token
        Subscribed, // hub -> subscriber: user
        Event, // hub -> subscriber: event, at, data
        Error // hub -> subscriber: code, message, permanent; the stream ends
    };

    Type type = Type::Event;
    QString token;
    QString user;
    QString event; // "binding.created", … (docs/api.md)
    QDateTime at;
    QJsonObject data; // the event's record, or part of one
    QString code;
    QString message;
    bool permanent = false;

    static EventStreamMessage subscribe(const QString &token);
    static EventStreamMessage subscribed(const QString &user);
    static EventStreamMessage eventOf(const QString &event, const QDateTime &at, QJsonObject data);
    static EventStreamMessage error(const Error &error);

    static QLatin1StringView typeName(Type type);

    // A message of a type this version does not know is refused.
    static Result<EventStreamMessage> fromJson(const QJsonObject &object);
    static Result<EventStreamMessage> fromText(QByteArrayView utf8);
    QJsonObject toJson() const;
    QString toText() const;

    friend bool operator==(const EventStreamMessage &, const EventStreamMessage &) = default;
};

} // namespace cloop::api
