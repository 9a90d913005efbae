#include "app-dashboard/ui/trafficgraph.h"

#include "app-dashboard/ui/statechip.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace cloop::dashboard {

namespace {

constexpr int kSwatch = 8;
constexpr int kGap = 6;

qint64 peakOf(const QList<qint64> &steps)
{
    return steps.isEmpty() ? 0 : *std::max_element(steps.cbegin(), steps.cend());
}

} // namespace

TrafficGraph::TrafficGraph(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("trafficGraph"));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void TrafficGraph::setHistory(const TrafficHistory &history)
{
    if (history == m_history)
        return;
    m_history = history;
    const QString words = summary();
    setAccessibleName(tr("Traffic"));
    setAccessibleDescription(words + QLatin1Char('\n') + details());
    setToolTip(details());
    updateGeometry();
    update();
}

QString TrafficGraph::describeRate(double bytesPerSecond, const QLocale &locale)
{
    // Whole bytes under a kilobyte: "0.3 B/s" would be noise.
    if (bytesPerSecond < 1000)
        return tr("%1 B/s").arg(locale.toString(qint64(bytesPerSecond + 0.5)));
    return tr("%1/s").arg(
        locale.formattedDataSize(qint64(bytesPerSecond + 0.5), 1, QLocale::DataSizeSIFormat));
}

double TrafficGraph::rateOf(qint64 bytes) const
{
    return m_history.stepSeconds > 0 ? double(bytes) / double(m_history.stepSeconds) : 0;
}

QStringList TrafficGraph::legendLines() const
{
    const qint64 toRun = m_history.toRun.isEmpty() ? 0 : m_history.toRun.constLast();
    const qint64 fromRun = m_history.fromRun.isEmpty() ? 0 : m_history.fromRun.constLast();
    return { tr("%1 to the run").arg(describeRate(rateOf(toRun), locale())),
        tr("%1 from the run").arg(describeRate(rateOf(fromRun), locale())) };
}

QString TrafficGraph::summary() const
{
    return legendLines().join(QStringLiteral(" · "));
}

QString TrafficGraph::windowWords() const
{
    const qint64 seconds = m_history.stepSeconds * qint64(m_history.toRun.size());
    return seconds >= 120 ? tr("the last %n min", nullptr, int(seconds / 60))
                          : tr("the last %n s", nullptr, int(seconds));
}

QString TrafficGraph::details() const
{
    const QString window = windowWords();
    const qint64 peakToRun = peakOf(m_history.toRun);
    const qint64 peakFromRun = peakOf(m_history.fromRun);
    if (peakToRun == 0 && peakFromRun == 0)
        return tr("No traffic in %1: no run used the device.").arg(window);
    return tr("Over %1, in steps of %n s, at most %2 to the run and %3 from it.", nullptr,
        int(m_history.stepSeconds))
        .arg(window, describeRate(rateOf(peakToRun), locale()),
            describeRate(rateOf(peakFromRun), locale()));
}

QColor TrafficGraph::toRunColor() const
{
    return toneColor(StateChip::Tone::Pending, palette(), QPalette::Base);
}

QColor TrafficGraph::fromRunColor() const
{
    return toneColor(StateChip::Tone::Warning, palette(), QPalette::Base);
}

int TrafficGraph::legendWidth() const
{
    int widest = 0;
    // As wide as the widest rate it may show, so the graph does not jump.
    for (const QString &line : { tr("%1 to the run").arg(describeRate(999e6, locale())),
             tr("%1 from the run").arg(describeRate(999e6, locale())) })
        widest = std::max(widest, fontMetrics().horizontalAdvance(line));
    return kSwatch + kGap + widest;
}

QSize TrafficGraph::sizeHint() const
{
    return { 200 + kGap * 2 + legendWidth(), fontMetrics().height() * 2 + 6 };
}

QSize TrafficGraph::minimumSizeHint() const
{
    return { 120 + kGap * 2 + legendWidth(), fontMetrics().height() * 2 + 6 };
}

void TrafficGraph::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        update();
    QWidget::changeEvent(event);
}

QRectF TrafficGraph::plotArea() const
{
    return QRectF(0, 0, width() - legendWidth() - kGap * 2, height()).adjusted(1, 2, -1, -2);
}

double TrafficGraph::xOfStep(qsizetype step) const
{
    const QRectF plot = plotArea();
    const qsizetype count = m_history.toRun.size();
    return count > 1 ? plot.left() + plot.width() * double(step) / double(count - 1) : plot.right();
}

void TrafficGraph::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRect legend(width() - legendWidth(), 0, legendWidth(), height());
    const QRectF plot = plotArea();

    // The scale: both ways on one, so their heights compare.
    const qint64 peak = std::max<qint64>({ peakOf(m_history.toRun), peakOf(m_history.fromRun), 1 });
    const auto pointsOf = [&](const QList<qint64> &steps) {
        QPolygonF points;
        const qsizetype count = steps.size();
        for (qsizetype i = 0; i < count; ++i) {
            const double x = count > 1 ? plot.left() + plot.width() * double(i) / double(count - 1)
                                       : plot.right();
            points.append(
                { x, plot.bottom() - plot.height() * double(steps.at(i)) / double(peak) });
        }
        return points;
    };

    const QColor axis = palette().color(QPalette::PlaceholderText);
    painter.setPen(QPen(axis, 1));
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());

    if (peakOf(m_history.toRun) == 0 && peakOf(m_history.fromRun) == 0) {
        // Flat lines say little; the words say it all.
        painter.setPen(axis);
        painter.drawText(plot, Qt::AlignCenter, tr("no traffic in %1").arg(windowWords()));
    }

    const QColor toRun = toRunColor();
    const QColor fromRun = fromRunColor();
    if (const QPolygonF line = pointsOf(m_history.toRun); !line.isEmpty()) {
        QPainterPath area;
        area.moveTo(line.first().x(), plot.bottom());
        for (const QPointF &point : line)
            area.lineTo(point);
        area.lineTo(line.last().x(), plot.bottom());
        QColor fill = toRun;
        fill.setAlphaF(0.22f);
        painter.fillPath(area, fill);
        painter.setPen(QPen(toRun, 1.5));
        painter.drawPolyline(line);
    }
    if (const QPolygonF line = pointsOf(m_history.fromRun); !line.isEmpty()) {
        painter.setPen(QPen(fromRun, 1.5));
        painter.drawPolyline(line);
    }

    // The legend: each way's colour and its latest rate.
    const QStringList lines = legendLines();
    const int lineHeight = fontMetrics().height();
    const int top = (height() - lineHeight * 2) / 2;
    for (int i = 0; i < 2; ++i) {
        const QRect row(legend.left(), top + i * lineHeight, legend.width(), lineHeight);
        const QRectF swatch(row.left(), row.center().y() - kSwatch / 2.0 + 1, kSwatch, kSwatch);
        painter.fillRect(swatch, i == 0 ? toRun : fromRun);
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(
            row.adjusted(kSwatch + kGap, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, lines.at(i));
    }
}

} // namespace cloop::dashboard
