#pragma once

#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/ui/formdialog.h"

class QComboBox;
class QLabel;
class QFormLayout;
class QLineEdit;

namespace cloop::dashboard {

// Bind… (an administrator) or Request… (a maintainer, with a reason): which
// project may use which forwarder's device, on which executor, for how long,
// and for a segment under which name and address. Opened from a card the
// forwarder is fixed; opened from a project's overview the project is.
// Every field is checked as it is typed.
class BindDialog final : public FormDialog
{
    Q_OBJECT

public:
    enum class Mode
    {
        Bind,
        Request
    };

    // No `forwarder` offers the client's live forwarders to choose from;
    // a non-empty `project` is fixed.
    BindDialog(ForwardersClient *forwarders, Mode mode,
        const std::optional<api::Forwarder> &forwarder, const QString &project = {},
        QWidget *parent = nullptr);

    // The projects the hub knows, offered in the project box.
    void setProjects(const QStringList &projects);
    BindingFields terms() const;
    QString problem() const override;

    QComboBox *forwarderBox() const { return m_forwarder; }
    QComboBox *projectBox() const { return m_project; }
    QComboBox *ttlBox() const { return m_ttl; }
    // When the binding would end, as the card will say it.
    QLabel *endsLabel() const { return m_ends; }
    QLineEdit *executorEdit() const { return m_executor; }
    QLineEdit *targetEdit() const { return m_target; }
    QLineEdit *addressEdit() const { return m_address; }
    QLineEdit *reasonEdit() const { return m_reason; }

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;

private:
    void showEnd();
    std::optional<api::Forwarder> chosenForwarder() const;
    bool isSegment() const;
    void showSegmentFields();

    ForwardersClient *m_forwarders;
    Mode m_mode;
    std::optional<api::Forwarder> m_fixedForwarder;
    QFormLayout *m_form;
    QComboBox *m_forwarder = nullptr;
    QComboBox *m_project;
    QLineEdit *m_executor;
    QComboBox *m_ttl;
    QLabel *m_ends;
    QLineEdit *m_target;
    QLineEdit *m_address;
    QLineEdit *m_reason = nullptr;
};

} // namespace cloop::dashboard
