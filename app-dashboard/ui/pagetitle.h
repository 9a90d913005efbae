#pragma once

#include <QLabel>

namespace cloop::dashboard {

// A screen's heading, the same size on every screen.
class PageTitle final : public QLabel
{
    Q_OBJECT

public:
    explicit PageTitle(const QString &text, QWidget *parent = nullptr)
        : QLabel(text, parent)
    {
        QFont larger = font();
        larger.setPointSizeF(larger.pointSizeF() * 1.4);
        setFont(larger);
        setAccessibleName(text);
    }
};

} // namespace cloop::dashboard
