#include "app-dashboard/ui/statechip.h"

#include "app-dashboard/ui/appearance.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>

namespace cloop::dashboard {

namespace {

QColor hueOf(StateChip::Tone tone)
{
    switch (tone) {
    case StateChip::Tone::Good:
        return QColor(0x2e, 0x9d, 0x4f);
    case StateChip::Tone::Warning:
        return QColor(0xd9, 0x8a, 0x00);
    case StateChip::Tone::Pending:
        return QColor(0x3b, 0x82, 0xd6);
    case StateChip::Tone::Bad:
        return QColor(0xd6, 0x45, 0x3d);
    case StateChip::Tone::Neutral:
        break;
    }
    return QColor(0x8a, 0x93, 0x9e);
}

QColor mixed(const QColor &a, const QColor &b, double share)
{
    return QColor::fromRgbF(float(a.redF() * share + b.redF() * (1 - share)),
        float(a.greenF() * share + b.greenF() * (1 - share)),
        float(a.blueF() * share + b.blueF() * (1 - share)));
}

constexpr int kDot = 8;

} // namespace

QColor toneColor(StateChip::Tone tone, const QPalette &palette, QPalette::ColorRole background)
{
    const QColor behind = palette.color(QPalette::Active, background);
    const bool darkBehind = behind.lightnessF() < 0.5;
    QColor color = hueOf(tone);
    // Towards white on a dark card, towards black on a light one, in small
    // steps, so the hue stays what it says.
    for (int step = 0; step < 20 && contrastRatio(color, behind) < 3.6; ++step)
        color = darkBehind ? color.lighter(108) : color.darker(108);
    return color;
}

QColor toneFill(StateChip::Tone tone, const QPalette &palette, QPalette::ColorRole background)
{
    return mixed(
        toneColor(tone, palette, background), palette.color(QPalette::Active, background), 0.12);
}

StateChip::StateChip(QWidget *parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    setAttribute(Qt::WA_TranslucentBackground);
}

void StateChip::setState(Tone tone, const QString &text)
{
    if (tone == m_tone && text == m_text)
        return;
    m_tone = tone;
    m_text = text;
    setAccessibleName(text);
    updateGeometry();
    update();
}

QSize StateChip::sizeHint() const
{
    const QFontMetrics metrics = fontMetrics();
    const int padding = metrics.height() / 2;
    return { padding + kDot + padding / 2 + metrics.horizontalAdvance(m_text) + padding,
        metrics.height() + padding / 2 + 2 };
}

void StateChip::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QColor ink = toneColor(m_tone, palette());
    const QRectF chip = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
    const qreal radius = chip.height() / 2;
    painter.setPen(QPen(ink, 1));
    painter.setBrush(toneFill(m_tone, palette()));
    painter.drawRoundedRect(chip, radius, radius);

    const int padding = fontMetrics().height() / 2;
    painter.setPen(Qt::NoPen);
    painter.setBrush(ink);
    painter.drawEllipse(QRectF(padding, (height() - kDot) / 2.0, kDot, kDot));

    painter.setPen(palette().color(QPalette::Active, QPalette::WindowText));
    painter.drawText(QRect(padding + kDot + padding / 2, 0, width(), height()),
        Qt::AlignVCenter | Qt::AlignLeft, m_text);
}

void StateChip::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange)
        updateGeometry();
    QWidget::changeEvent(event);
}

} // namespace cloop::dashboard
