// The dashboard speaks English (with proper plurals) and German: the
// translations are built into it, and --lang (or the locale) picks one.

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
    QCOMPARE(ForwarderCard::tr("%n days left", nullptr, 1), QStringLiteral("1 day left"));
}

void TestDashboardLanguage::germanReplacesTheText()
{
    QCOMPARE(installTranslations(QStringLiteral("de")), QStringLiteral("de"));
    QCOMPARE(ForwardersPage::tr("Device forwarders"), QStringLiteral(u"Geräte-Forwarder"));
    QCOMPARE(ForwarderCard::tr("%n days left", nullptr, 1), QStringLiteral("noch 1 Tag"));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QCOMPARE(describeTimeLeft(now.addDays(3), now), QStringLiteral("noch 3 Tage"));
    // Qt's own words too, for the standard buttons.
    QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("Abbrechen"));
}

void TestDashboardLanguage::anUnknownLanguageFallsBackToEnglish()
{
    QCOMPARE(installTranslations(QStringLiteral("tlh")), QStringLiteral("en"));
}

QTEST_MAIN(TestDashboardLanguage)
#include "tst_dashboardlanguage.moc"
