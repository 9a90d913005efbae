#include "daemon-agent/harness/harnesstable.h"

#include "common/protocol/agentcapabilities.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace cloop::agent {

using namespace Qt::StringLiterals;

HarnessTable HarnessTable::official()
{
    // Each vendor's documented command, for the workload user: npm's global
    // prefix is that user's own ~/.npm-global, which the agent puts on its
    // PATH with the other per-user harness folders.
    const auto npm = [](const QString &package) {
        return QStringList { u"sh"_s, u"-c"_s,
            u"npm install -g --prefix \"$HOME/.npm-global\" "_s + package };
    };
    HarnessTable table;
    table.m_installers = {
        { u"claude"_s, u"Anthropic (Claude Code)"_s, npm(u"@anthropic-ai/claude-code"_s) },
        { u"codex"_s, u"OpenAI (Codex CLI)"_s, npm(u"@openai/codex"_s) },
        { u"gemini"_s, u"Google (Gemini CLI)"_s, npm(u"@google/gemini-cli"_s) },
        { u"aider"_s, u"Aider"_s,
            { u"sh"_s, u"-c"_s,
                u"python3 -m pip install --user aider-install && \"$HOME/.local/bin/aider-install\""_s } },
    };
    return table;
}

Result<HarnessTable> HarnessTable::withFile(const QString &file)
{
    HarnessTable table = official();
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly))
        return Error::make(
            u"harness_table_invalid"_s, u"cannot read %1: %2"_s.arg(file, in.errorString()));
    const QByteArray bytes = in.read(kMaxFileBytes + 1);
    if (bytes.size() > kMaxFileBytes)
        return Error::make(u"harness_table_invalid"_s,
            u"%1 is larger than %2 bytes"_s.arg(file).arg(kMaxFileBytes));
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &parseError);
    if (!document.isObject())
        return Error::make(u"harness_table_invalid"_s,
            u"%1 is not a JSON object: %2"_s.arg(file, parseError.errorString()));
    const QJsonObject entries = document.object();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
        const QJsonObject entry = it.value().toObject();
        QStringList command;
        for (const QJsonValue &word : entry.value("command"_L1).toArray())
            command.append(word.toString());
        if (!protocol::AgentCapabilities::isHarnessName(it.key()) || command.isEmpty()
            || command.contains(QString()) || command.size() > 64)
            return Error::make(u"harness_table_invalid"_s,
                u"%1: entry \"%2\" needs a harness name and \"command\": a list of words"_s.arg(
                    file, it.key().left(64)));
        HarnessInstaller installer { it.key(), entry.value("vendor"_L1).toString().left(128),
            command };
        table.m_installers.removeIf(
            [&](const HarnessInstaller &known) { return known.name == installer.name; });
        table.m_installers.append(installer);
    }
    return table;
}

std::optional<HarnessInstaller> HarnessTable::find(const QString &name) const
{
    for (const HarnessInstaller &installer : m_installers)
        if (installer.name == name)
            return installer;
    return std::nullopt;
}

QStringList HarnessTable::names() const
{
    QStringList names;
    for (const HarnessInstaller &installer : m_installers)
        names.append(installer.name);
    return names;
}

} // namespace cloop::agent
