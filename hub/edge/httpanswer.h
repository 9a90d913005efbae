#pragma once

#include "hub/edge/httprequestparser.h"

#include <QByteArray>
#include <QList>

namespace cloop::hub::edge {

// One HTTP response as the front writes it.
struct HttpAnswer
{
    int status = 200;
    QByteArray contentType = "application/json";
    QByteArray body;
    QList<HttpHeader> headers;

    static HttpAnswer json(int status, QByteArray body);
    // {"error": {"code", "message"}}, the admin API's shape for every refusal.
    static HttpAnswer error(int status, const QString &code, const QString &message);
};

// The standard reason phrase of a status ("Payload Too Large").
QByteArray reasonPhrase(int status);

// Status line and headers, up to the blank line; the body follows apart
// (a large one is not copied behind its head). `keepAlive` false adds
// "Connection: close".
QByteArray serializeHead(const HttpAnswer &answer, bool keepAlive);
// Head and body in one buffer, for small answers.
QByteArray serializeAnswer(const HttpAnswer &answer, bool keepAlive);

// What a client that sent "Expect: 100-continue" waits for before its body.
QByteArray continueLine();

} // namespace cloop::hub::edge
