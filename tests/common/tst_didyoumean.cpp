// What the command lines suggest for a mistyped word (common/util/didyoumean.h).

#include "common/util/didyoumean.h"

#include <QTest>

using cloop::util::closestMatch;
using cloop::util::didYouMean;

class TestDidYouMean final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void suggestsWhatWasMeant_data();
    void suggestsWhatWasMeant();
    void saysItAsTheTailOfAMessage();
};

void TestDidYouMean::suggestsWhatWasMeant_data()
{
    QTest::addColumn<QString>("typed");
    QTest::addColumn<QStringList>("candidates");
    QTest::addColumn<QString>("expected");

    const QStringList forward { QStringLiteral("enroll"), QStringLiteral("list"),
        QStringLiteral("revoke"), QStringLiteral("test"), QStringLiteral("upgrade"),
        QStringLiteral("bind"), QStringLiteral("bindings"), QStringLiteral("unbind"),
        QStringLiteral("request") };
    QTest::newRow("a letter dropped") << QStringLiteral("lst") << forward << QStringLiteral("list");
    QTest::newRow("two letters swapped")
        << QStringLiteral("enrlol") << forward << QStringLiteral("enroll");
    QTest::newRow("a letter changed")
        << QStringLiteral("revoje") << forward << QStringLiteral("revoke");
    QTest::newRow("a letter added") << QStringLiteral("tests") << forward << QStringLiteral("test");
    QTest::newRow("capitals") << QStringLiteral("LIST") << forward << QStringLiteral("list");
    QTest::newRow("the start of one only")
        << QStringLiteral("upg") << forward << QStringLiteral("upgrade");
    QTest::newRow("the start of two, one of them an edit away")
        << QStringLiteral("bin") << forward << QStringLiteral("bind");
    QTest::newRow("nothing close") << QStringLiteral("deploy") << forward << QString();
    QTest::newRow("too far for a short word")
        << QStringLiteral("ls") << QStringList { QStringLiteral("add") } << QString();
    QTest::newRow("empty") << QString() << forward << QString();
    QTest::newRow("no candidates") << QStringLiteral("list") << QStringList() << QString();
    const QStringList options { QStringLiteral("--json"), QStringLiteral("--all"),
        QStringLiteral("--hub"), QStringLiteral("--data") };
    QTest::newRow("an option") << QStringLiteral("--jsn") << options << QStringLiteral("--json");
    QTest::newRow("an option, one dash")
        << QStringLiteral("-json") << options << QStringLiteral("--json");
}

void TestDidYouMean::suggestsWhatWasMeant()
{
    QFETCH(QString, typed);
    QFETCH(QStringList, candidates);
    QFETCH(QString, expected);
    QCOMPARE(closestMatch(typed, candidates), expected);
}

void TestDidYouMean::saysItAsTheTailOfAMessage()
{
    QCOMPARE(didYouMean(QStringLiteral("lst"), { QStringLiteral("list") }),
        QStringLiteral(" (did you mean \"list\"?)"));
    QCOMPARE(didYouMean(QStringLiteral("zzz"), { QStringLiteral("list") }), QString());
}

QTEST_APPLESS_MAIN(TestDidYouMean)
#include "tst_didyoumean.moc"
