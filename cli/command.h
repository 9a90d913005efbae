#pragma once

#include "cli/adminclient.h"
#include "cli/endpointoptions.h"
#include "common/api/recordfields.h"

#include "common/util/commandline.h"
#include "common/util/subcommands.h"

#include <QCommandLineParser>
#include <QJsonObject>

#include <optional>

namespace cloop::cli {

// An answer of the admin API read as the record it holds (common/api).
template <typename Record> Result<Record> recordOf(const Result<QJsonObject> &answer)
{
    if (!answer)
        return answer.error();
    return Record::fromJson(*answer);
}

// One command of the `cloop` command line ("cloop forward bind", …): its
// options with --help (and, for those that talk to a hub, the endpoint
// options), its calls to the admin API, and how its failures are reported:
// "cloop NAME: message" on stderr with exit code 2 for bad arguments or
// configuration and 1 when the hub refused or could not be reached.
class Command
{
public:
    enum class Endpoint
    {
        Options,
        None
    };

    Command(QString name, const QString &description, Endpoint endpoint = Endpoint::Options);

    void addOptions(const QList<QCommandLineOption> &options) { m_commandLine.addOptions(options); }
    void addPositional(const QString &name, const QString &help, const QString &syntax = {})
    {
        m_commandLine.parser().addPositionalArgument(name, help, syntax);
    }

    // Parses the arguments (arguments[0] is the program's name); a value
    // when the command is already over (--help printed, bad syntax reported).
    std::optional<int> parse(const QStringList &arguments);

    bool isSet(const QCommandLineOption &option) const { return m_commandLine.isSet(option); }
    QString value(const QCommandLineOption &option) const { return m_commandLine.value(option); }
    QStringList values(const QCommandLineOption &option) const
    {
        return m_commandLine.values(option);
    }
    QStringList positionalArguments() const { return m_commandLine.parser().positionalArguments(); }
    // The option's value, trimmed; an error showing `syntax` when it is missing or blank.
    Result<QString> required(const QCommandLineOption &option, const QString &syntax) const;
    // Exactly `count` positional arguments, else an error showing `syntax`.
    Result<QStringList> positionals(qsizetype count, const QString &syntax) const;

    // Resolves the endpoint on first use, then calls the admin API.
    Result<QJsonObject> get(const QString &path, const QueryItems &query = {});
    Result<QJsonObject> post(const QString &path, const QJsonObject &body);
    // A listing read as the records it holds: GET `path`, the array under `key`.
    template <typename Record>
    Result<QList<Record>> getList(
        const QString &path, QLatin1StringView key, const QueryItems &query = {})
    {
        auto answer = getText(path, query);
        if (!answer)
            return answer.error();
        return api::listInText<Record>(*answer, key);
    }
    // The hub of the last call (only after one).
    const AdminEndpoint &endpoint() const { return m_client->endpoint(); }

    const QString &name() const { return m_name; }
    // Under --json, failures are JSON on stderr too:
    // {"error": {"code": "…", "message": "…", "exit_code": N}}.
    int usageError(const QString &message) const;
    // Exit code 2 when no endpoint could be made out of the options and
    // files, 1 for everything the hub said or the network did.
    int failed(const Error &error) const;

    // --json, for commands that list or create something.
    void addJsonOption();
    // With --json: prints the value and says so; the command is then done.
    bool printedJson(const QJsonValue &value) const;
    // A listing, turned into JSON only when --json asks for it: always
    // {"items": [...]}, so that a list can grow fields beside its items.
    template <typename Record> bool printedJson(const QList<Record> &records) const
    {
        return wantsJson()
            && printedJson(QJsonObject { { QStringLiteral("items"), api::toJsonArray(records) } });
    }
    bool wantsJson() const;

private:
    Result<AdminClient *> client();
    Result<QByteArray> getText(const QString &path, const QueryItems &query);
    int failedAsJson(const QString &code, const QString &message, int exitCode) const;
    Result<QJsonObject> call(const QByteArray &method, const QString &path, const QJsonObject &body,
        const QueryItems &query);

    QString m_name;
    util::CommandLine m_commandLine;
    EndpointOptions m_endpointOptions; // registered with Endpoint::Options only
    // Made once the endpoint is resolved; its connection serves every call.
    std::optional<AdminClient> m_client;
    QCommandLineOption m_json { QStringLiteral("json"),
        QStringLiteral("Print the hub's answer as JSON.") };
    bool m_hasJson = false;
};

} // namespace cloop::cli
