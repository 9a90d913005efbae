#include "common/daemon/hubreleasesource.h"

#include "common/release/releasesignature.h"
#include "common/util/atomicfile.h"

#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QNetworkAccessManager>
#include <QNetworkReply>

namespace cloop::daemon {

using namespace Qt::StringLiterals;

Result<HubReleaseSource> HubReleaseSource::fromCredential(
    const identity::DaemonCredential &credential)
{
    auto pins = net::PinSet::parse(credential.pin);
    if (!pins)
        return pins.error();
    auto trust = net::HubTrust::fromPinsAndCaFile(*pins, credential.caFile);
    if (!trust)
        return trust.error();
    return HubReleaseSource(api::AdminEndpoint {
        credential.server, credential.credential, *trust, u"the daemon's credential"_s });
}

Result<QList<OfferedPackage>> HubReleaseSource::list(const QString &package)
{
    auto request = api::adminRequest(m_endpoint, u"/api/releases"_s, { { u"package"_s, package } });
    if (!request)
        return request.error();
    QNetworkAccessManager network;
    network.setStrictTransportSecurityEnabled(false);
    auto reply = api::runGuarded(m_endpoint.trust, [&] { return network.get(*request); });
    if (!reply)
        return reply.error();
    auto answer = api::readAdminAnswer(reply->get());
    if (!answer)
        return answer.error();
    QList<OfferedPackage> offered;
    for (const QJsonValue &entry : answer->value("releases"_L1).toArray()) {
        const QJsonObject object = entry.toObject();
        offered.append({ object.value("id"_L1).toInteger(), object.value("package"_L1).toString(),
            object.value("version"_L1).toString(), object.value("channel"_L1).toString(),
            object.value("commit"_L1).toString(), object.value("size_bytes"_L1).toInteger() });
    }
    return offered;
}

Status HubReleaseSource::fetch(const QString &path, const QString &file, qint64 limit)
{
    auto request = api::adminRequest(m_endpoint, path);
    if (!request)
        return request.error();
    request->setTransferTimeout(120'000);
    QFile out(file);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return Error::make(
            u"upgrade_failed"_s, u"cannot write %1: %2"_s.arg(file, out.errorString()));
    out.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    std::optional<Error> tooLarge;
    QNetworkAccessManager network;
    network.setStrictTransportSecurityEnabled(false);
    const auto readPieces = [&](QNetworkReply *reply) {
        QObject::connect(reply, &QNetworkReply::readyRead, reply, [&, reply] {
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (status != 200)
                return;
            const QByteArray piece = reply->readAll();
            if (out.size() + piece.size() > limit) {
                tooLarge = Error::make(u"upgrade_failed"_s,
                    u"%1 is larger than the %2 bytes the hub listed"_s.arg(path).arg(limit));
                reply->abort();
                return;
            }
            out.write(piece);
        });
    };
    auto reply = api::runGuarded(
        m_endpoint.trust, [&] { return network.get(*request); }, readPieces);
    if (!reply)
        return reply.error();
    if (tooLarge)
        return *tooLarge;
    const int status = reply->get()->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200) {
        auto answer = api::readAdminAnswer(reply->get());
        return answer ? Error::make(u"upgrade_failed"_s, u"HTTP %1 for %2"_s.arg(status).arg(path))
                      : answer.error();
    }
    if (!out.flush())
        return Error::make(
            u"upgrade_failed"_s, u"cannot write %1: %2"_s.arg(file, out.errorString()));
    return {};
}

Status HubReleaseSource::download(
    const OfferedPackage &offered, const QString &packagePath, const QString &signaturePath)
{
    if (Status fetched
        = fetch(u"/api/releases/%1/package"_s.arg(offered.id), packagePath, offered.sizeBytes);
        !fetched)
        return fetched;
    return fetch(u"/api/releases/%1/signature"_s.arg(offered.id), signaturePath,
        release::ReleaseSignature::kMaxFileBytes);
}

} // namespace cloop::daemon
