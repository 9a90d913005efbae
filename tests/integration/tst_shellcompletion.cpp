// Integration: `cloop completion bash|zsh`, loaded into a real bash, offers
// what a person would tab through: commands, their members, and a
// command's options from its own --help.

#include "support/processutil.h"

#include <QDir>
#include <QTest>

using namespace cloop::testing;

class TestShellCompletion final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bashOffersWhatComesNext_data();
    void bashOffersWhatComesNext();
    void zshLoadsTheSameThroughBashcompinit();
    void anUnknownShellIsAnArgumentError();
};

void TestShellCompletion::bashOffersWhatComesNext_data()
{
    QTest::addColumn<QStringList>("typed"); // the words after "cloop", the last one being typed
    QTest::addColumn<QStringList>("offered");

    QTest::newRow("a command") << QStringList { QStringLiteral("forw") }
                               << QStringList { QStringLiteral("forward") };
    QTest::newRow("two members") << QStringList { QStringLiteral("forward"), QStringLiteral("bi") }
                                 << QStringList { QStringLiteral("bind"),
                                        QStringLiteral("bindings") };
    QTest::newRow("a nested family")
        << QStringList { QStringLiteral("executor"), QStringLiteral("virtual"), QString() }
        << QStringList { QStringLiteral("create"), QStringLiteral("list") };
    QTest::newRow("an option of a command")
        << QStringList { QStringLiteral("forward"), QStringLiteral("list"), QStringLiteral("--j") }
        << QStringList { QStringLiteral("--json") };
    QTest::newRow("an option after an argument") << QStringList { QStringLiteral("forward"),
        QStringLiteral("bind"), QStringLiteral("3"), QStringLiteral("--proj") }
                                                 << QStringList { QStringLiteral("--project") };
    QTest::newRow("an option of the forwarder itself") << QStringList { QStringLiteral("forward"),
        QStringLiteral("--token-f") } << QStringList { QStringLiteral("--token-file") };
    QTest::newRow("nothing after an argument") << QStringList { QStringLiteral("run"),
        QStringLiteral("show"), QStringLiteral("3"), QString() }
                                               << QStringList {};
}

void TestShellCompletion::bashOffersWhatComesNext()
{
    QFETCH(QStringList, typed);
    QFETCH(QStringList, offered);
    const QString cloop = binaryPath(QStringLiteral("cloop"));
    QStringList words { QStringLiteral("'%1'").arg(cloop) };
    for (const QString &word : typed)
        words.append(QStringLiteral("'%1'").arg(word));
    const QString script = QStringLiteral("source <('%1' completion bash) || exit 3\n"
                                          "COMP_WORDS=(%2); COMP_CWORD=%3\n"
                                          "_cloop\n"
                                          "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
                               .arg(cloop, words.join(u' '))
                               .arg(typed.size());
    const CliResult completed = runProgram(QStringLiteral("bash"), { QStringLiteral("-c"), script },
        childEnvironment(QDir::tempPath()));
    CLOOP_COMPARE_EXIT(completed, 0);
    QStringList got = completed.stdoutText().split(u'\n', Qt::SkipEmptyParts);
    got.sort();
    QCOMPARE(got, offered);
}

void TestShellCompletion::zshLoadsTheSameThroughBashcompinit()
{
    const CliResult zsh = runProgram(binaryPath(QStringLiteral("cloop")),
        { QStringLiteral("completion"), QStringLiteral("zsh") },
        childEnvironment(QDir::tempPath()));
    CLOOP_COMPARE_EXIT(zsh, 0);
    QVERIFY(zsh.stdoutText().startsWith(QLatin1String("#compdef cloop\n")));
    QVERIFY(zsh.stdoutText().contains(QLatin1String("bashcompinit")));
    QVERIFY(zsh.stdoutText().contains(QLatin1String("complete -o default -F _cloop cloop")));
}

void TestShellCompletion::anUnknownShellIsAnArgumentError()
{
    const CliResult fish = runProgram(binaryPath(QStringLiteral("cloop")),
        { QStringLiteral("completion"), QStringLiteral("fish") },
        childEnvironment(QDir::tempPath()));
    CLOOP_COMPARE_EXIT(fish, 2);
    QVERIFY2(fish.stderrText().contains(QLatin1String("expected bash or zsh")),
        qPrintable(fish.describe()));
    QVERIFY(fish.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestShellCompletion)
#include "tst_shellcompletion.moc"
