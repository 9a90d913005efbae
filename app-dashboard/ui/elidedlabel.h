#pragma once

#include <QLabel>
#include <QResizeEvent>

namespace cloop::dashboard {

// One line of plain text that never grows its parent: what does not fit
// ends in "…", and the whole text is in its tooltip unless one is set.
class ElidedLabel final : public QLabel
{
    Q_OBJECT

public:
    explicit ElidedLabel(QWidget *parent = nullptr)
        : QLabel(parent)
    {
        setTextFormat(Qt::PlainText);
        setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
        setMinimumWidth(1);
    }

    void setFullText(const QString &text)
    {
        m_full = text;
        elide();
    }
    QString fullText() const { return m_full; }

    QSize sizeHint() const override
    {
        return { fontMetrics().horizontalAdvance(m_full), fontMetrics().height() };
    }
    QSize minimumSizeHint() const override { return { 1, fontMetrics().height() }; }

protected:
    void resizeEvent(QResizeEvent *event) override
    {
        QLabel::resizeEvent(event);
        elide();
    }

private:
    void elide()
    {
        // A report's later lines are for the tooltip; the card shows the first.
        const QString line = m_full.section(QLatin1Char('\n'), 0, 0);
        setText(fontMetrics().elidedText(line, Qt::ElideRight, qMax(1, width())));
    }

    QString m_full;
};

} // namespace cloop::dashboard
