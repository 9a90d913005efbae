#include "common/util/shellcompletion.h"

#include <QStringList>

namespace cloop::util {

namespace {

// "[forward]='enroll list …'" lines: each path's members, the root's under "".
void addMembers(QStringList &lines, const QString &path, std::span<const Subcommand> family)
{
    lines.append(
        QStringLiteral("        [%1]='%2'")
            .arg(path.isEmpty() ? QStringLiteral("_") : path, subcommandNames(family).join(u' ')));
    for (const Subcommand &member : family) {
        if (member.members) {
            const QString child = path.isEmpty() ? QString::fromUtf8(member.name)
                                                 : path + u'.' + QString::fromUtf8(member.name);
            addMembers(lines, child, member.members());
        }
    }
}

QString bashScript(const QString &program, std::span<const Subcommand> families)
{
    QStringList members;
    addMembers(members, QString(), families);
    const QString function = QStringLiteral("_%1").arg(QString(program).replace(u'-', u'_'));
    return QStringLiteral("# Completion of %1 for bash, written by `%1 completion bash`.\n"
                          "%2() {\n"
                          "    local -A members=(\n"
                          "%3\n"
                          "    )\n"
                          "    local current=${COMP_WORDS[COMP_CWORD]} path=_ command=\"\" word i\n"
                          "    # The words that name commands so far: forward, then bind.\n"
                          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
                          "        word=${COMP_WORDS[i]}\n"
                          "        [[ \" ${members[$path]} \" == *\" $word \"* ]] || break\n"
                          "        command+=\" $word\"\n"
                          "        if [[ $path == _ ]]; then path=$word; else path+=.$word; fi\n"
                          "    done\n"
                          "    local words=\"\"\n"
                          "    if [[ $current == -* ]]; then\n"
                          "        # The command's own options, as its --help lists them.\n"
                          "        words=$(\"${COMP_WORDS[0]}\"$command --help 2>/dev/null |\n"
                          "            grep -oE -- '(^|[ ,])--[a-z][a-z-]*' | grep -oE -- "
                          "'--[a-z][a-z-]*' | sort -u)\n"
                          "    elif ((i == COMP_CWORD)); then\n"
                          "        words=${members[$path]}\n"
                          "    fi\n"
                          "    COMPREPLY=($(compgen -W \"$words\" -- \"$current\"))\n"
                          "}\n"
                          "complete -o default -F %2 %1\n")
        .arg(program, function, members.join(u'\n'));
}

} // namespace

QString completionScript(
    const QString &shell, const QString &program, std::span<const Subcommand> families)
{
    if (shell == QLatin1String("bash"))
        return bashScript(program, families);
    if (shell == QLatin1String("zsh"))
        return QStringLiteral("#compdef %1\n"
                              "# Completion of %1 for zsh, written by `%1 completion zsh`: the "
                              "bash one, through bashcompinit.\n"
                              "autoload -U +X bashcompinit && bashcompinit\n")
                   .arg(program)
            + bashScript(program, families);
    return {};
}

} // namespace cloop::util
