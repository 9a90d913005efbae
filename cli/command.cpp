#include "cli/command.h"

#include "cli/output.h"

#include <QCoreApplication>
#include <QJsonDocument>

#include <cstdio>

namespace cloop::cli {

namespace {
const QString kEndpointErrorCode = QStringLiteral("cli_endpoint");
} // namespace

Command::Command(QString name, const QString &description, Endpoint endpoint)
    : m_name(std::move(name))
    , m_commandLine(QStringLiteral("cloop ") + m_name, description)
{
    if (endpoint == Endpoint::Options)
        m_endpointOptions.addTo(m_commandLine);
}

std::optional<int> Command::parse(const QStringList &arguments)
{
    return m_commandLine.parse(arguments);
}

Result<QString> Command::required(const QCommandLineOption &option, const QString &syntax) const
{
    const QString value = m_commandLine.parser().value(option).trimmed();
    if (value.isEmpty())
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("--%1 is required (usage: %2)")
                .arg(option.names().constFirst(), syntax));
    return value;
}

Result<QStringList> Command::positionals(qsizetype count, const QString &syntax) const
{
    const QStringList given = m_commandLine.parser().positionalArguments();
    if (given.size() == count)
        return given;
    if (given.size() > count)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("unexpected argument \"%1\" (usage: %2)").arg(given.at(count), syntax));
    return Error::make(
        QStringLiteral("usage"), QStringLiteral("missing argument (usage: %1)").arg(syntax));
}

Result<QJsonObject> Command::get(const QString &path, const QueryItems &query)
{
    return call("GET", path, {}, query);
}

Result<QJsonObject> Command::post(const QString &path, const QJsonObject &body)
{
    return call("POST", path, body, {});
}

Result<AdminClient *> Command::client()
{
    if (!m_client) {
        auto endpoint = m_endpointOptions.resolve(m_commandLine.parser());
        if (!endpoint)
            return Error::make(kEndpointErrorCode, endpoint.error().message, true);
        m_client.emplace(*endpoint);
    }
    return &*m_client;
}

Result<QJsonObject> Command::call(
    const QByteArray &method, const QString &path, const QJsonObject &body, const QueryItems &query)
{
    auto resolved = client();
    if (!resolved)
        return resolved.error();
    return (*resolved)->call(method, path, body, query);
}

Result<QByteArray> Command::getText(const QString &path, const QueryItems &query)
{
    auto resolved = client();
    if (!resolved)
        return resolved.error();
    return (*resolved)->getText(path, query);
}

int Command::usageError(const QString &message) const
{
    if (wantsJson())
        return failedAsJson(QStringLiteral("usage"), message, kExitUsage);
    return m_commandLine.usageError(message);
}

int Command::failed(const Error &error) const
{
    const int exitCode = error.code == kEndpointErrorCode ? kExitUsage : kExitFailed;
    if (wantsJson())
        return failedAsJson(error.code, error.message, exitCode);
    return fail(m_name, error.message, exitCode);
}

int Command::failedAsJson(const QString &code, const QString &message, int exitCode) const
{
    const QJsonObject error { { QStringLiteral("code"),
                                  code.isEmpty() ? QStringLiteral("error") : code },
        { QStringLiteral("message"), message },
        { QStringLiteral("command"), QStringLiteral("cloop ") + m_name },
        { QStringLiteral("exit_code"), exitCode } };
    std::fputs(QJsonDocument(QJsonObject { { QStringLiteral("error"), error } })
                   .toJson(QJsonDocument::Compact)
                   .append('\n')
                   .constData(),
        stderr);
    std::fflush(stderr);
    return exitCode;
}

void Command::addJsonOption()
{
    m_commandLine.addOptions({ m_json });
    m_hasJson = true;
}

bool Command::wantsJson() const
{
    return m_hasJson && m_commandLine.parser().isSet(m_json);
}

bool Command::printedJson(const QJsonValue &value) const
{
    if (!wantsJson())
        return false;
    printJson(value);
    return true;
}

} // namespace cloop::cli
