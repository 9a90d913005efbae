#include "common/identity/enrollmentbundle.h"

#include "common/crypto/secrets.h"
#include "common/net/huburls.h"
#include "common/net/spkipin.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace cloop::identity {

namespace {
constexpr qsizetype kChecksumSize = 4;

Error bad(const QString &message)
{
    return Error::make(QStringLiteral("invalid_bundle"), message, true);
}

QByteArray checksum(const QString &prefix, const QByteArray &json)
{
    return secrets::sha256(prefix.toLatin1() + json).left(kChecksumSize);
}

// "u" alone (a bundle of one hub, or of a version before clusters), or "us"
// with "u" as its first entry.
Result<QList<QUrl>> readHubUrls(const QJsonObject &object)
{
    const QJsonValue first = object.value(QLatin1String("u"));
    const QJsonValue all = object.value(QLatin1String("us"));
    auto hub = net::parseHubUrl(first.toString(), net::PlaintextHubUrls::LeftToTheDaemon);
    if (!first.isString() || !hub)
        return bad(
            QStringLiteral("the bundle names no valid hub URL%1")
                .arg(first.isString() ? QStringLiteral(": ") + hub.error().message : QString()));
    if (all.isUndefined())
        return QList<QUrl> { *hub };
    auto hubs = net::parseHubUrlList(all, net::PlaintextHubUrls::LeftToTheDaemon);
    if (!hubs)
        return bad(QStringLiteral("the bundle's list of hub URLs is invalid: %1")
                       .arg(hubs.error().message));
    if (hubs->first() != *hub)
        return bad(QStringLiteral("the bundle's first hub URL %1 does not head its list of hub "
                                  "URLs (%2)")
                       .arg(hub->toString(), net::describeHubUrls(*hubs)));
    return *hubs;
}

bool isBase64UrlChar(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= u'A' && u <= u'Z') || (u >= u'a' && u <= u'z') || (u >= u'0' && u <= u'9')
        || u == u'-' || u == u'_';
}
} // namespace

QString EnrollmentBundle::prefixFor(Kind kind)
{
    return kind == Kind::Forwarder ? QStringLiteral("cloopfwd1.") : QStringLiteral("cloopexe1.");
}

QList<QUrl> EnrollmentBundle::hubs() const
{
    return QList<QUrl> { hub } + moreHubs;
}

void EnrollmentBundle::setHubs(const QList<QUrl> &urls)
{
    hub = urls.value(0);
    moreHubs = urls.mid(1);
}

QString EnrollmentBundle::encode() const
{
    const QString prefix = prefixFor(kind);
    QJsonObject object { { QStringLiteral("u"), hub.toString() }, { QStringLiteral("t"), token },
        { QStringLiteral("p"), pins } };
    // A bundle of one hub stays as short as it always was.
    if (!moreHubs.isEmpty())
        object.insert(QStringLiteral("us"), net::hubUrlListJson(hubs()));
    const QByteArray json = QJsonDocument(object).toJson(QJsonDocument::Compact);
    const QByteArray raw = json + checksum(prefix, json);
    return prefix
        + QString::fromLatin1(
            raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

Result<EnrollmentBundle> EnrollmentBundle::decode(
    const QString &input, Kind expected, net::PinRequirement pin)
{
    // A bundle pasted from a chat window may arrive wrapped over lines.
    QString text;
    text.reserve(input.size());
    for (const QChar c : input) {
        if (!c.isSpace())
            text.append(c);
    }
    if (text.isEmpty())
        return bad(QStringLiteral("the bundle is empty"));
    if (text.size() > kMaxLength)
        return bad(QStringLiteral("the bundle is %1 characters long, more than any bundle")
                       .arg(text.size()));

    const QString prefix = prefixFor(expected);
    const Kind other = expected == Kind::Forwarder ? Kind::Executor : Kind::Forwarder;
    if (text.startsWith(prefixFor(other)))
        return bad(expected == Kind::Forwarder
                ? QStringLiteral("this is an executor bundle (cloopexe1.); give it to "
                                 "`cloop executor agent --bundle`")
                : QStringLiteral("this is a forwarder bundle (cloopfwd1.); give it to "
                                 "`cloop forward --bundle`"));
    if (!text.startsWith(prefix)) {
        if (text.startsWith(QLatin1String("cloop")) && text.contains(QLatin1Char('.')))
            return bad(QStringLiteral("the bundle starts with \"%1\", not \"%2\": it comes from "
                                      "another version of cloop")
                           .arg(text.left(text.indexOf(QLatin1Char('.')) + 1), prefix));
        return bad(
            QStringLiteral("this is not a cloop bundle: it must start with \"%1\"").arg(prefix));
    }

    const QString body = text.mid(prefix.size());
    for (qsizetype i = 0; i < body.size(); ++i) {
        if (!isBase64UrlChar(body.at(i)))
            return bad(QStringLiteral("character '%1' at position %2 cannot be part of a bundle: "
                                      "it was mistyped or mangled in the paste")
                           .arg(body.at(i))
                           .arg(prefix.size() + i + 1));
    }
    const auto decoded = QByteArray::fromBase64Encoding(
        body.toLatin1(), QByteArray::Base64UrlEncoding | QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.size() <= kChecksumSize + 2)
        return bad(QStringLiteral("the bundle is truncated: copy the whole line again"));
    const QByteArray json = decoded.decoded.left(decoded.decoded.size() - kChecksumSize);
    const QByteArray sum = decoded.decoded.right(kChecksumSize);
    if (!secrets::constantTimeEquals(sum, checksum(prefix, json)))
        return bad(QStringLiteral("the bundle's checksum does not match: it was truncated or "
                                  "mistyped; copy the whole line again"));

    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return bad(QStringLiteral("the bundle's content is malformed"));
    const QJsonObject object = document.object();

    EnrollmentBundle bundle;
    bundle.kind = expected;
    auto hubs = readHubUrls(object);
    if (!hubs)
        return hubs.error();
    bundle.setHubs(*hubs);
    bundle.token = object.value(QLatin1String("t")).toString();
    bundle.pins = object.value(QLatin1String("p")).toString();
    const auto expectedToken = expected == Kind::Forwarder
        ? secrets::SecretKind::ForwarderEnrollmentToken
        : secrets::SecretKind::AgentEnrollmentToken;
    if (secrets::kindOf(bundle.token) != expectedToken)
        return bad(
            QStringLiteral("the bundle does not hold %1").arg(secrets::describe(expectedToken)));
    auto pins = net::PinSet::parse(bundle.pins);
    if (!pins)
        return bad(QStringLiteral("the bundle's pin is invalid: %1").arg(pins.error().message));
    if (pins->isEmpty() && pin == net::PinRequirement::Required)
        return Error::make(ErrorCode::BundleUnpinned,
            QStringLiteral("the bundle holds no pin of the hub's key; every bundle a hub makes "
                           "has one, so this one was edited or made by hand"),
            true);
    return bundle;
}

QString EnrollmentBundle::tokenFileCommand(const QString &daemonCommand, const QString &file) const
{
    // A bundle is base64url and dots only: nothing in it needs quoting.
    return QStringLiteral("(umask 077; printf '%s\\n' '%1' > %2) && %3 --token-file %2")
        .arg(encode(), file, daemonCommand);
}

QString EnrollmentBundle::installCommand(const QString &daemonCommand, const QString &file) const
{
    return tokenFileCommand(daemonCommand + QLatin1String(" install"), file);
}

} // namespace cloop::identity
