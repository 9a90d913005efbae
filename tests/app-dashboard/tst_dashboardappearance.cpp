// Light and dark palettes where every text reads on its background, and
// the dashboard's icons built in and drawable.

#include "app-dashboard/ui/appearance.h"
#include "app-dashboard/ui/outlinedstyle.h"
#include "app-dashboard/ui/statechip.h"
#include "app-dashboard/ui/themedicon.h"

#include <QApplication>
#include <QCheckBox>
#include <QDirIterator>
#include <QFileInfo>
#include <QIcon>
#include <QLineEdit>
#include <QPixmap>
#include <QRadioButton>
#include <QStyleOptionButton>
#include <QVBoxLayout>
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
    void stateColoursStandOut_data();
    void stateColoursStandOut();
    void iconsStandOutInEveryState_data();
    void iconsStandOutInEveryState();
    void controlsShowTheirEdges_data();
    void controlsShowTheirEdges();
};

namespace {

// The ink an icon was drawn in: its most opaque pixel's colour.
QColor inkOf(const QPixmap &pixmap)
{
    const QImage image = pixmap.toImage().convertToFormat(QImage::Format_ARGB32);
    QColor ink;
    int strongest = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            const QColor at = image.pixelColor(x, y);
            if (at.alpha() > strongest) {
                strongest = at.alpha();
                ink = at;
            }
        }
    }
    ink.setAlpha(255);
    return strongest == 255 ? ink : QColor();
}

QString ratioWords(const char *what, double ratio)
{
    return QStringLiteral("%1: %2:1").arg(QLatin1String(what)).arg(ratio, 0, 'f', 2);
}

} // namespace

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

void TestDashboardAppearance::stateColoursStandOut_data()
{
    everyTextReadsOnItsBackground_data();
}

// A state chip's dot and a Test's pass or fail mark carry meaning in colour
// (beside words): WCAG 1.4.11 asks 3:1 against what they stand on, and the
// chip's words must still read on its tinted fill.
void TestDashboardAppearance::stateColoursStandOut()
{
    QFETCH(int, theme);
    const QPalette palette = paletteFor(Theme(theme));
    const auto tones = { StateChip::Tone::Good, StateChip::Tone::Neutral, StateChip::Tone::Warning,
        StateChip::Tone::Pending, StateChip::Tone::Bad };
    for (StateChip::Tone tone : tones) {
        for (QPalette::ColorRole background : { QPalette::Base, QPalette::Window }) {
            const QColor behind = palette.color(QPalette::Active, background);
            const QColor mark = toneColor(tone, palette, background);
            const QColor fill = toneFill(tone, palette, background);
            const double onBackground = contrastRatio(mark, behind);
            QVERIFY2(
                onBackground >= 3.0, qPrintable(ratioWords("mark on background", onBackground)));
            const double onFill = contrastRatio(mark, fill);
            QVERIFY2(onFill >= 3.0, qPrintable(ratioWords("dot on chip", onFill)));
            const double words
                = contrastRatio(palette.color(QPalette::Active, QPalette::WindowText), fill);
            QVERIFY2(words >= 4.5, qPrintable(ratioWords("chip words", words)));
        }
    }
    // Live and revoked are not told apart by colour alone, but they do differ.
    QVERIFY(toneColor(StateChip::Tone::Good, palette) != toneColor(StateChip::Tone::Bad, palette));
}

void TestDashboardAppearance::iconsStandOutInEveryState_data()
{
    everyTextReadsOnItsBackground_data();
}

// Every line icon, as the dashboard draws it, stands out at 3:1 from each
// surface it sits on: a button, a card, the window, and the highlight of a
// selected navigation item; a disabled one is visibly not an enabled one.
void TestDashboardAppearance::iconsStandOutInEveryState()
{
    QFETCH(int, theme);
    const QPalette palette = paletteFor(Theme(theme));
    int icons = 0;
    for (QDirIterator it(QStringLiteral(":/icons"), { QStringLiteral("*.svg") }); it.hasNext();) {
        const QString name = QFileInfo(it.next()).completeBaseName();
        if (name == QLatin1String("cloop-dashboard"))
            continue; // the application's own, in its own colours
        const QIcon icon = themedIcon(name, palette);
        const QColor normal = inkOf(icon.pixmap(QSize(20, 20), QIcon::Normal));
        const QColor selected = inkOf(icon.pixmap(QSize(20, 20), QIcon::Selected));
        const QColor disabled = inkOf(icon.pixmap(QSize(20, 20), QIcon::Disabled));
        QVERIFY2(normal.isValid() && selected.isValid() && disabled.isValid(), qPrintable(name));
        for (QPalette::ColorRole surface : { QPalette::Button, QPalette::Base, QPalette::Window }) {
            const double ratio = contrastRatio(normal, palette.color(QPalette::Active, surface));
            QVERIFY2(
                ratio >= 3.0, qPrintable(name + QLatin1Char(' ') + ratioWords("normal", ratio)));
        }
        const double onHighlight
            = contrastRatio(selected, palette.color(QPalette::Active, QPalette::Highlight));
        QVERIFY2(onHighlight >= 3.0, qPrintable(name + ratioWords(" selected", onHighlight)));
        const double disabledOnButton
            = contrastRatio(disabled, palette.color(QPalette::Disabled, QPalette::Button));
        QVERIFY2(
            disabledOnButton >= 3.0, qPrintable(name + ratioWords(" disabled", disabledOnButton)));
        const double apart = contrastRatio(disabled, normal);
        QVERIFY2(apart >= 1.5, qPrintable(name + ratioWords(" disabled against normal", apart)));
        ++icons;
    }
    QVERIFY(icons >= 10);
}

void TestDashboardAppearance::controlsShowTheirEdges_data()
{
    everyTextReadsOnItsBackground_data();
}

namespace {

// The strongest contrast with `against` among the pixels of `row` between
// `from` and `to` of `image`: an edge crossing the row shows as one of them.
double strongestOnRow(const QImage &image, int row, int from, int to, const QColor &against)
{
    double strongest = 1.0;
    for (int x = qMax(0, from); x <= qMin(to, image.width() - 1); ++x)
        strongest = qMax(strongest, contrastRatio(image.pixelColor(x, row), against));
    return strongest;
}

} // namespace

// What shows that a field, a check box or an unchecked radio button is there
// is its edge: drawn, it stands 3:1 from the window around it.
void TestDashboardAppearance::controlsShowTheirEdges()
{
    QFETCH(int, theme);
    const QPalette palette = paletteFor(Theme(theme));
    QApplication::setStyle(new OutlinedStyle);
    QApplication::setPalette(palette);
    const QColor window = palette.color(QPalette::Active, QPalette::Window);
    const QColor base = palette.color(QPalette::Active, QPalette::Base);
    QVERIFY(contrastRatio(outlineColor(palette), window) >= 3.0);
    QVERIFY(contrastRatio(outlineColor(palette), base) >= 3.0);
    // Focus is drawn in the highlight colour, on fields and on the window.
    const QColor focus = palette.color(QPalette::Active, QPalette::Highlight);
    QVERIFY2(contrastRatio(focus, window) >= 3.0,
        qPrintable(ratioWords("focus on window", contrastRatio(focus, window))));
    QVERIFY2(contrastRatio(focus, base) >= 3.0,
        qPrintable(ratioWords("focus on a field", contrastRatio(focus, base))));

    QWidget host;
    auto *field = new QLineEdit(&host);
    auto *radio = new QRadioButton(QStringLiteral("Network segment"), &host);
    auto *box = new QCheckBox(QStringLiteral("Show revoked"), &host);
    auto *layout = new QVBoxLayout(&host);
    for (QWidget *control : { static_cast<QWidget *>(field), static_cast<QWidget *>(radio),
             static_cast<QWidget *>(box) })
        layout->addWidget(control);
    host.resize(320, 120);
    layout->activate();

    const QImage fieldImage = field->grab().toImage();
    const int middle = fieldImage.height() / 2;
    const double fieldEdge = strongestOnRow(fieldImage, middle, 0, 1, window);
    QVERIFY2(fieldEdge >= 3.0, qPrintable(ratioWords("field edge on window", fieldEdge)));

    for (QAbstractButton *button :
        { static_cast<QAbstractButton *>(radio), static_cast<QAbstractButton *>(box) }) {
        QStyleOptionButton option;
        option.initFrom(button);
        const QRect indicator = button->style()->subElementRect(qobject_cast<QRadioButton *>(button)
                ? QStyle::SE_RadioButtonIndicator
                : QStyle::SE_CheckBoxIndicator,
            &option, button);
        const QImage image = button->grab().toImage();
        double edge = 1.0;
        for (int row = indicator.center().y() - 1; row <= indicator.center().y() + 1; ++row)
            edge = qMax(
                edge, strongestOnRow(image, row, indicator.left(), indicator.right(), window));
        QVERIFY2(edge >= 3.0,
            qPrintable(button->text() + QLatin1Char(' ') + ratioWords("indicator edge", edge)));
    }
}

QTEST_MAIN(TestDashboardAppearance)
#include "tst_dashboardappearance.moc"
