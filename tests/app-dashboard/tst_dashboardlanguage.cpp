// The dashboard speaks English (with proper plurals) and German: the
// translations are built into it, and --lang (or the locale) picks one.

#include "app-dashboard/core/timewords.h"
#include "app-dashboard/ui/forwardercard.h"
#include "app-dashboard/ui/forwarderspage.h"
#include "app-dashboard/ui/language.h"

#include <QApplication>
#include <QDateTime>
#include <QFile>
#include <QtTest>

using namespace cloop::dashboard;

class TestDashboardLanguage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bothTranslationsAreBuiltIn();
    void englishHasItsPlurals();
    void germanReplacesTheText();
    void anUnknownLanguageFallsBackToEnglish();
};

void TestDashboardLanguage::bothTranslationsAreBuiltIn()
{
    QVERIFY(QFile::exists(QStringLiteral(":/i18n/dashboard_de.qm")));
    QVERIFY(QFile::exists(QStringLiteral(":/i18n/dashboard_en.qm")));
}

void TestDashboardLanguage::englishHasItsPlurals()
{
    QCOMPARE(installTranslations(QStringLiteral("en")), QStringLiteral("en"));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QCOMPARE(describeTimeLeft(now.addDays(3), now), QStringLiteral("3 days left"));
    QCOMPARE(
        describeTimeLeft(now.addSecs(3 * 3600 + 20 * 60), now), QStringLiteral("3 h 20 min left"));
    QCOMPARE(describeTimeLeft(now.addSecs(45), now), QStringLiteral("45 s left"));
    QCOMPARE(describeTimeLeft(now.addSecs(-1), now), QStringLiteral("expired"));
    // One way to write a length of time, wherever it shows.
    QCOMPARE(describeDuration(8 * 3600), QStringLiteral("8 h"));
    QCOMPARE(describeDuration(24 * 3600), QStringLiteral("24 h"));
    QCOMPARE(describeDuration(7 * 86400), QStringLiteral("7 days"));
    QCOMPARE(describeDuration(3 * 86400 + 4 * 3600), QStringLiteral("3 days 4 h"));
    QCOMPARE(describeDuration(59 * 60), QStringLiteral("59 min"));
    QCOMPARE(describeDuration(60 * 60), QStringLiteral("1 h"));
    QCOMPARE(describeDuration(90 * 60), QStringLiteral("1 h 30 min"));
    QCOMPARE(QCoreApplication::translate("cloop::dashboard::TimeWords", "%n days", nullptr, 1),
        QStringLiteral("1 day"));
}

void TestDashboardLanguage::germanReplacesTheText()
{
    QCOMPARE(installTranslations(QStringLiteral("de")), QStringLiteral("de"));
    QCOMPARE(ForwardersPage::tr("Device forwarders"), QStringLiteral(u"Geräte-Forwarder"));
    QCOMPARE(QCoreApplication::translate("cloop::dashboard::TimeWords", "%n days", nullptr, 1),
        QStringLiteral("1 Tag"));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QCOMPARE(describeTimeLeft(now.addDays(3), now), QStringLiteral("noch 3 Tage"));
    QCOMPARE(describeDuration(3 * 86400 + 4 * 3600), QStringLiteral("3 Tage 4 h"));
    // Qt's own words too, for the standard buttons.
    QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("Abbrechen"));
}

void TestDashboardLanguage::anUnknownLanguageFallsBackToEnglish()
{
    QCOMPARE(installTranslations(QStringLiteral("tlh")), QStringLiteral("en"));
}

QTEST_MAIN(TestDashboardLanguage)
#include "tst_dashboardlanguage.moc"
