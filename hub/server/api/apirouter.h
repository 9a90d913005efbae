#pragma once

#include "common/result.h"
#include "common/util/jsonwriter.h"
#include "hub/storage/apitokenstore.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QObject>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QUrlQuery>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

namespace cloop::hub {

// An HTTP request as the API sees it, independent of the HTTP server
// library, so handlers are tested without sockets.
struct ApiRequest
{
    QByteArray method; // "GET", "POST", ...
    QString path;
    QByteArray authorization; // the Authorization header
    QByteArray body;
    QUrlQuery query;
};

class DeferredResponse;

struct ApiResponse
{
    int status = 200;
    QJsonValue body;
    // Set when the answer comes later (it needs a daemon's reply): the
    // server answers when it finishes; status and body are unused.
    std::shared_ptr<DeferredResponse> deferred;
    // A file's bytes instead of JSON, when contentType is set.
    QByteArray raw;
    QByteArray contentType;

    static ApiResponse error(int status, const QString &code, const QString &message);
    // The HTTP status follows from the error's code (docs/api.md).
    static ApiResponse fromError(const Error &error);
    static ApiResponse ok(QJsonValue body, int status = 200)
    {
        return ApiResponse { status, std::move(body), nullptr, {}, {} };
    }
    static ApiResponse bytes(QByteArray raw, QByteArray contentType)
    {
        return ApiResponse { 200, {}, nullptr, std::move(raw), std::move(contentType) };
    }

    // The body as a client reads it, written or built.
    QJsonValue jsonBody() const;

    // JSON already written, as the body.
    static ApiResponse json(QByteArray written, int status = 200)
    {
        return ApiResponse { status, {}, nullptr, std::move(written), "application/json" };
    }

    // What a route answers with a service's result: the record as
    // toJson(record) shows it, with `status`, or the error. `toJson` either
    // returns the record's QJsonObject or writes it: toJson(writer, record).
    template <typename T, typename ToJson>
    static ApiResponse of(const Result<T> &result, ToJson &&toJson, int status = 200)
    {
        if (!result)
            return fromError(result.error());
        if constexpr (std::is_invocable_v<ToJson &, util::JsonWriter &, const T &>) {
            QByteArray written;
            util::JsonWriter out(written);
            toJson(out, *result);
            return json(std::move(written), status);
        } else {
            return ok(toJson(*result), status);
        }
    }
    // A listing: {"<key>": [toJson(record), …]}, or the error. Written
    // record by record: a listing of thousands never exists as one tree.
    template <typename T, typename ToJson>
    static ApiResponse listOf(
        const Result<QList<T>> &result, QLatin1StringView key, ToJson &&toJson)
    {
        if (!result)
            return fromError(result.error());
        QByteArray written;
        util::JsonWriter out(written);
        out.beginObject();
        out.key(key);
        out.beginArray();
        for (const T &record : *result) {
            if constexpr (std::is_invocable_v<ToJson &, util::JsonWriter &, const T &>)
                toJson(out, record);
            else
                out.value(QJsonValue(toJson(record)));
            // Room for the rest at the first record's size, made once: a
            // listing of 10,000 grew its buffer, and copied it, twenty times.
            if (&record == &result->front())
                written.reserve(written.size() * (result->size() + 1) * 9 / 8);
        }
        out.endArray();
        out.endObject();
        return json(std::move(written));
    }
};

// An answer on its way. Whoever makes one must finish it, exactly once and
// within a bounded time (the caller waits on an open HTTP request).
class DeferredResponse final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeferredResponse)

public:
    DeferredResponse() = default;
    // Later calls are ignored.
    void finish(ApiResponse response);
    bool isFinished() const { return m_finished; }
    const ApiResponse &result() const { return *m_result; }

Q_SIGNALS:
    void finished(const cloop::hub::ApiResponse &response);

private:
    bool m_finished = false;
    std::optional<ApiResponse> m_result;
};

// One authenticated call, as a route handler gets it.
struct ApiCall
{
    const ApiRequest &request;
    const ApiPrincipal &caller;
    const QJsonObject &body;
    QList<qint64> ids; // the {id} parts of the path, in order

    qint64 id() const { return ids.value(0); }
    QString queryValue(const QString &key) const
    {
        return request.query.queryItemValue(key, QUrl::FullyDecoded);
    }
    bool queryFlag(const QString &key) const;
    // A string field of the body: empty when absent, an error when not a string.
    Result<QString> text(QLatin1StringView key, bool required = false) const;
};

// Method + path pattern -> handler. Patterns are literal paths in which
// "{id}" stands for a positive integer.
class ApiRouter
{
public:
    using Handler = std::function<ApiResponse(const ApiCall &)>;

    void add(const QByteArray &method, const QString &pattern, Handler handler);
    // 404 for an unknown path, 405 for a known path with another method.
    ApiResponse dispatch(
        const ApiRequest &request, const ApiPrincipal &caller, const QJsonObject &body) const;
    // The 404 or 405 dispatch would answer, known before any body is read.
    std::optional<ApiResponse> refusal(const QByteArray &method, const QString &path) const;
    // The pattern of the route a request takes ("/api/forwarders/{id}"); empty
    // when none: what metrics name a request by, never its ids.
    QString patternOf(const QByteArray &method, const QString &path) const;

private:
    struct Route
    {
        QByteArray method;
        QString pattern;
        QRegularExpression path;
        Handler handler;
    };
    const Route *find(const QByteArray &method, const QString &path, QStringList *allowed,
        QRegularExpressionMatch *match) const;

    QList<Route> m_routes;
};

} // namespace cloop::hub
