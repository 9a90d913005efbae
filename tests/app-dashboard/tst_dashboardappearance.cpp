// Light and dark palettes where every text reads on its background, and
// the dashboard's icons built in and drawable.

#include "app-dashboard/ui/appearance.h"

#include <QApplication>
#include <QDirIterator>
#include <QIcon>
#include <QPixmap>
#include <QtTest>

using namespace cloop::dashboard;

class TestDashboardAppearance : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void contrastIsMeasuredAsWcagDoes();
    void everyTextReadsOnItsBackground_data();
    void everyTextReadsOnItsBackground();
    void themesAreNamed();
    void iconsAreBuiltInAndDraw();
};

void TestDashboardAppearance::contrastIsMeasuredAsWcagDoes()
{
    QCOMPARE(qRound(contrastRatio(Qt::black, Qt::white)), 21);
    QCOMPARE(contrastRatio(Qt::white, Qt::white), 1.0);
    // The WCAG example: #777 on white is just under 4.5.
    QVERIFY(contrastRatio(QColor(0x77, 0x77, 0x77), Qt::white) < 4.5);
    QVERIFY(contrastRatio(QColor(0x76, 0x76, 0x76), Qt::white) >= 4.5);
}

void TestDashboardAppearance::everyTextReadsOnItsBackground_data()
{
    QTest::addColumn<int>("theme");
    QTest::newRow("light") << int(Theme::Light);
    QTest::newRow("dark") << int(Theme::Dark);
}

void TestDashboardAppearance::everyTextReadsOnItsBackground()
{
    QFETCH(int, theme);
    const QPalette palette = paletteFor(Theme(theme));
    const struct
    {
        QPalette::ColorRole text;
        QPalette::ColorRole background;
        double least;
    } pairs[] = {
        { QPalette::WindowText, QPalette::Window, 4.5 },
        { QPalette::Text, QPalette::Base, 4.5 },
        { QPalette::Text, QPalette::AlternateBase, 4.5 },
        { QPalette::ButtonText, QPalette::Button, 4.5 },
        { QPalette::HighlightedText, QPalette::Highlight, 4.5 },
        { QPalette::Link, QPalette::Base, 4.5 },
        { QPalette::Link, QPalette::Window, 4.5 },
        { QPalette::BrightText, QPalette::Window, 4.5 },
        { QPalette::PlaceholderText, QPalette::Base, 4.5 },
        { QPalette::ToolTipText, QPalette::ToolTipBase, 4.5 },
    };
    for (const auto &pair : pairs) {
        const double ratio = contrastRatio(palette.color(QPalette::Active, pair.text),
            palette.color(QPalette::Active, pair.background));
        QVERIFY2(ratio >= pair.least,
            qPrintable(QStringLiteral("role %1 on %2: %3:1")
                           .arg(int(pair.text))
                           .arg(int(pair.background))
                           .arg(ratio, 0, 'f', 2)));
    }
    // Disabled text is dimmer but still legible (3:1, for large and UI text).
    QVERIFY(contrastRatio(palette.color(QPalette::Disabled, QPalette::WindowText),
                palette.color(QPalette::Disabled, QPalette::Window))
        >= 3.0);
    QVERIFY(contrastRatio(palette.color(QPalette::Disabled, QPalette::ButtonText),
                palette.color(QPalette::Disabled, QPalette::Button))
        >= 3.0);
}

void TestDashboardAppearance::themesAreNamed()
{
    QCOMPARE(themeNamed(QStringLiteral("dark")), std::optional<Theme>(Theme::Dark));
    QCOMPARE(themeNamed(QStringLiteral("Light")), std::optional<Theme>(Theme::Light));
    QVERIFY(!themeNamed(QStringLiteral("solarized")));
    QVERIFY(!themeNamed(QString()));
}

void TestDashboardAppearance::iconsAreBuiltInAndDraw()
{
    int icons = 0;
    for (QDirIterator it(QStringLiteral(":/icons"), { QStringLiteral("*.svg") }); it.hasNext();) {
        const QString path = it.next();
        const QPixmap drawn = QIcon(path).pixmap(QSize(24, 24));
        QVERIFY2(!drawn.isNull(), qPrintable(path));
        ++icons;
    }
    QVERIFY(icons >= 10);
}

QTEST_MAIN(TestDashboardAppearance)
#include "tst_dashboardappearance.moc"
