#pragma once

#include "common/result.h"

#include <QJsonArray>
#include <QList>
#include <QUrl>

namespace cloop::net {

// A daemon may know several hub URLs (the members of a hub cluster) and tries
// them in order. Whichever way a URL arrives (a bundle, the credential file,
// a hub's announcement) it is read here, so every URL a daemon dials passed
// the same checks.
inline constexpr int kMaxHubUrls = 16;
inline constexpr qsizetype kMaxHubUrlLength = 256;

// Who may vouch for plaintext to a host that is not loopback. A bundle or a
// credential file leaves it to the daemon's operator (--insecure-plaintext,
// judged when dialling); what a hub announces never asks for less than TLS.
enum class PlaintextHubUrls
{
    LeftToTheDaemon,
    LoopbackOnly
};

// wss:// or https:// to any host, ws:// or http:// as `plaintext` says; a
// host, no user name, query or fragment, at most kMaxHubUrlLength characters.
Result<QUrl> parseHubUrl(const QString &text, PlaintextHubUrls plaintext);
// A JSON list of 1 to kMaxHubUrls such URLs, none named twice.
Result<QList<QUrl>> parseHubUrlList(const QJsonValue &value, PlaintextHubUrls plaintext);
QJsonArray hubUrlListJson(const QList<QUrl> &urls);
// Whether two URLs reach the same hub endpoint (https:// is wss://, a path is ignored).
bool sameHub(const QUrl &a, const QUrl &b);
// "wss://a:7443, wss://b:7443", for log lines and messages.
QString describeHubUrls(const QList<QUrl> &urls);

} // namespace cloop::net
