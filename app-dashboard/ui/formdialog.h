#pragma once

#include "app-dashboard/core/hubapi.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLayout;
class QPushButton;

namespace cloop::dashboard {

// A dialog that asks the hub for something: its fields are checked as they
// are typed (the action button waits until problem() is empty, and the
// message line says what is wrong), then the request goes out, and the
// dialog closes only when the hub agrees; a refusal is shown in place and
// nothing typed is lost.
class FormDialog : public QDialog
{
    Q_OBJECT

public:
    QLabel *messageLabel() const { return m_message; }
    QDialogButtonBox *buttons() const { return m_buttons; }
    QPushButton *actionButton() const;

    // What keeps the fields from being sent, in words; empty when nothing.
    virtual QString problem() const = 0;

protected:
    FormDialog(const QString &title, const QString &actionText, QWidget *parent);

    // The fields, above the message line and the buttons.
    void setContent(QLayout *content);
    // The least width of the dialog. (Not QWidget::setMinimumWidth: a
    // dialog with a minimum size of its own no longer grows to fit a message
    // that wraps, and squeezes its fields instead.)
    void setFormWidth(int width);
    // Call whenever a field changes (and once when the fields are built).
    void revalidate();
    virtual QString busyText() const;
    virtual QString refusalText(const Error &error) const;
    virtual void carryOut(QObject *context, HubApi::Callback done) = 0;
    // The hub agreed. By default the dialog closes; a dialog with more to
    // show calls settle() instead, and its button then closes it.
    virtual void succeeded(const QJsonObject &answer);
    void settle(const QString &closeText);

private:
    void submit();

    QLabel *m_message;
    QDialogButtonBox *m_buttons;
    bool m_settled = false;
};

// Opens `dialog` modal to its window, to be deleted once closed.
void openModal(QDialog *dialog);

} // namespace cloop::dashboard
