#include "app-dashboard/ui/outlinedstyle.h"

#include "app-dashboard/ui/appearance.h"

#include <QPainter>
#include <QStyleFactory>
#include <QStyleOption>

namespace cloop::dashboard {

namespace {

// 3:1 is the least; a curved edge is antialiased and a little fainter.
constexpr double kLeastContrast = 3.5;

QColor mixed(const QColor &a, const QColor &b, double share)
{
    return QColor::fromRgbF(float(a.redF() * share + b.redF() * (1 - share)),
        float(a.greenF() * share + b.greenF() * (1 - share)),
        float(a.blueF() * share + b.blueF() * (1 - share)));
}

} // namespace

QColor outlineColor(const QPalette &palette)
{
    const QColor strong = palette.color(QPalette::Active, QPalette::PlaceholderText);
    const QColor window = palette.color(QPalette::Active, QPalette::Window);
    const QColor base = palette.color(QPalette::Active, QPalette::Base);
    for (int percent = 30; percent < 100; percent += 5) {
        const QColor candidate = mixed(strong, window, percent / 100.0);
        if (contrastRatio(candidate, window) >= kLeastContrast
            && contrastRatio(candidate, base) >= kLeastContrast)
            return candidate;
    }
    return strong;
}

OutlinedStyle::OutlinedStyle()
    : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion")))
{ }

void OutlinedStyle::drawPrimitive(PrimitiveElement element, const QStyleOption *option,
    QPainter *painter, const QWidget *widget) const
{
    QProxyStyle::drawPrimitive(element, option, painter, widget);
    const bool enabled = option->state & State_Enabled;
    // A focused field has Fusion's highlight for an edge, which reads.
    const bool focused = option->state & State_HasFocus;
    if (!enabled)
        return;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setPen(QPen(outlineColor(option->palette), 1));
    painter->setBrush(Qt::NoBrush);
    // Half a pixel in, so a one-pixel line covers whole pixels as Fusion's does.
    const QRectF edge = QRectF(option->rect).adjusted(0.5, 0.5, -0.5, -0.5);
    switch (element) {
    case PE_FrameLineEdit:
        if (!focused)
            painter->drawRoundedRect(edge, 2, 2);
        break;
    case PE_IndicatorCheckBox:
        painter->drawRect(edge);
        break;
    case PE_IndicatorRadioButton:
        painter->drawEllipse(edge);
        break;
    default:
        break;
    }
    painter->restore();
}

} // namespace cloop::dashboard
